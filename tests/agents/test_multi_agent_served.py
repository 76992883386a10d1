"""A multi-agent app served by google-adk's own api_server is judged as it is in-process and
by ``adk eval`` (issue 60, item 4): a root that transfers to two sub-agents and calls a third
as a tool, an instruction templated on the session's state (tests/helpdesk_app.py). Every
judge prompt (ADK's transfer section, the ``transfer_to_agent`` declaration, a sub-agent's
identity on its own turns) and every row are the same on both routes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from agent_script import APP_DETAILS_CONFIG
from conftest import work_offline
from fake_gemini import fake_gemini, judge_requests
from helpdesk_app import rule, write

from platform_eval.cli import main

pytestmark = pytest.mark.slow  # an api_server, two agent runs with judges: CI runs it


def _rows(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    rows = json.loads(capsys.readouterr().out)["rows"]
    return [{k: v for k, v in r.items() if k not in ("item", "request")} for r in rows]


def _adk_eval(evalset: Path) -> dict[tuple[str, str], float | None]:
    """Per case and metric, the scores ``adk eval`` (its own process) wrote."""
    import os
    import subprocess
    import sys

    adk = Path(sys.executable).with_name("adk")
    done = subprocess.run(
        [str(adk), "eval", "agents/helpdesk", str(evalset), "--config_file_path", "judged.json"],
        env=dict(os.environ, ADK_DISABLE_LOAD_DOTENV="1"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Eval Run Summary" in done.stdout, done.stderr[-3000:]
    [written] = Path("agents/helpdesk/.adk/eval_history").glob("*.evalset_result.json")
    result = json.loads(written.read_text())
    result = json.loads(result) if isinstance(result, str) else result
    return {
        (case["eval_id"], metric["metric_name"]): metric["score"]
        for case in result["eval_case_results"]
        for metric in case["overall_eval_metric_results"]
    }


def test_a_served_multi_agent_app_is_judged_on_the_prompts_of_the_same_app_run_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    from served_agents import adk_api_server

    work_offline(tmp_path, monkeypatch)
    evalset = write(tmp_path / "agents")
    Path("judged.json").write_text(json.dumps(APP_DETAILS_CONFIG))
    common = ["--config", "judged.json", "--format", "json", "--no-judge-cache",
              "--judge-model", "gemini-2.5-flash"]  # fmt: skip
    with fake_gemini(rule) as model:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", model.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        theirs = _adk_eval(evalset)
        adk_asked = judge_requests(model.seen)
        model.seen.clear()
        main(["-q", "run", str(evalset), "--agent", "agents/helpdesk", *common])
        here_rows, here_asked = _rows(capsys), judge_requests(model.seen)
        assert here_rows and all(r["score"] is not None for r in here_rows), here_rows
        model.seen.clear()
        with adk_api_server(tmp_path / "agents") as url:
            main(["-q", "run", str(evalset), "--agent", url, *common])
        rows, asked = _rows(capsys), judge_requests(model.seen)
    transfer = "You have a list of other agents to transfer to"
    assert any(transfer in request for request in here_asked)
    assert any("transfer_to_agent" in request for request in here_asked)
    assert any("You are an agent. Your internal name is \\\"billing_agent\\\"" in r
               or "billing_agent" in r for r in here_asked)  # fmt: skip
    assert here_asked == adk_asked  # in-process, as adk eval asks
    assert asked == here_asked  # served, as in-process
    assert rows == here_rows
    assert {(r["evalCaseId"], r["metric"]): r["score"] for r in here_rows} == pytest.approx(
        {key: theirs[key] for key in {(r["evalCaseId"], r["metric"]) for r in here_rows}}
    )
    assert not [r.getMessage() for r in caplog.records if "cannot be built" in r.getMessage()]
