"""``run --agent URL``: the cases run on a served agent, google-adk's own api_server serving the
sample agent on loopback (tests/served_agents.py), its model the fake Gemini; scored as the same
agent run in-process is, its sessions saved and read back alike, its failures one line each."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from fake_gemini import FakeGemini
from served_agents import adk_api_server, bearer_required

from platform_eval.cli import main

CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}


@pytest.fixture
def served(agent_project: FakeGemini, tmp_path: Path) -> Any:
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    with adk_api_server(tmp_path / "agents") as url:
        yield url


def _rows(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    rows = json.loads(capsys.readouterr().out)["rows"]
    return [{k: v for k, v in r.items() if k not in ("item", "request")} for r in rows]


def _run(*args: str) -> int:
    common = ["--config", "eval_config.json", "--format", "json"]
    return main(["-q", "run", "agents/travel.evalset.json", *args, *common])


@pytest.mark.slow  # an api_server, two agent runs and a replay: CI runs it (.ci/run)
def test_a_served_agent_scores_as_the_same_agent_run_here(
    served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("--agent", "agents/travel_agent") == 1  # weather_oslo misses its thresholds
    here = _rows(capsys)
    assert _run("--agent", served, "--save-sessions", "sessions") == 1
    there = _rows(capsys)
    assert there == here
    assert len(list(Path("sessions").iterdir())) == 4
    assert _run("--traces", "sessions") == 1
    assert _rows(capsys) == there  # the server's sessions, saved and read back


@pytest.mark.slow
def test_the_app_is_the_one_the_server_lists_or_the_one_named(
    served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("--agent", served, "--app-name", "travel_agent") == 1
    assert len(_rows(capsys)) == 8
    assert _run("--agent", served, "--app-name", "nope") == 2
    err = capsys.readouterr().err
    assert f"{served} serves no app 'nope'; it serves: travel_agent" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2


@pytest.mark.slow
def test_headers_go_with_every_request_and_are_never_shown(
    agent_project: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    secret = "s3cret-token-value"
    with adk_api_server(tmp_path / "agents", bearer_required(secret)) as url:
        assert _run("--agent", url, "--agent-header", f"Authorization: Bearer {secret}") == 1
        assert len(_rows(capsys)) == 8
        # Without it: the loopback server's 401, in one line naming the URL.
        assert _run("--agent", url) == 2
        err = capsys.readouterr().err
        assert f"{url}/list-apps answered GET with 401" in err
        assert _run("--agent", url, "--agent-header", "Authorization: Bearer wrong") == 2
        assert secret not in capsys.readouterr().err


def test_what_cannot_be_done_with_a_served_agent_is_refused_before_it_runs(
    agent_project: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{closed.getsockname()[1]}"
    for extra, said in (
        ([], f"the served agent at {nowhere} cannot be reached"),
        (["--mock-tools", "golden"], "runs its tools on its server"),
        (["--save-traces", "t"], "recorded on its server"),
        (["--agent-header", "Authorization"], "expected 'Name: value'"),
    ):
        assert _run("--agent", nowhere, *extra) == 2, extra
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, err
    assert _run("--agent", "http://agents.example", "--agent-header", "X-Key: k") == 2
    assert "clear text" in capsys.readouterr().err
    assert _run("--agent", "agents/travel_agent", "--app-name", "x") == 2
    assert "--app-name goes with --agent URL" in capsys.readouterr().err
    assert not agent_project.seen  # no model was asked


@pytest.mark.slow
def test_judged_criteria_are_shown_the_served_agents_instruction_and_tools(
    agent_project: FakeGemini, served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The app details come from the server's app-info: the instruction as the agent declares
    it (its placeholders unfilled: the server does not say what it sent) and its tools."""
    from agent_script import APP_DETAILS_CONFIG
    from fake_gemini import judge_requests

    Path("judged.json").write_text(json.dumps(APP_DETAILS_CONFIG))
    code = main(["-q", "run", "agents/travel.evalset.json", "--agent", served, "--config",
                 "judged.json", "--format", "json", "--no-judge-cache"])  # fmt: skip
    assert code in (0, 1)
    rows = _rows(capsys)
    assert rows and all(r["score"] is not None for r in rows), rows
    asked = judge_requests(agent_project.seen)
    assert any("The traveller's name is {user_name?}" in request for request in asked)
    assert any("book_hotel" in request for request in asked)
