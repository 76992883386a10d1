"""A replay replays: ``run --agent`` saving its sessions and traces, then ``run --traces`` on
either, gives every row, and every judge request, of the agent's own run (the docs promise the
same scores without running the agent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from agent_script import APP_DETAILS_CONFIG
from fake_gemini import FakeGemini, judge_requests

from platform_eval.cli import main

#: Judged criteria that read the agent's instruction and tool declarations (its app details),
#: and deterministic ones beside them.
CONFIG = {
    "criteria": {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 0.8,
        **APP_DETAILS_CONFIG["criteria"],
    }
}


def _rows(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """Each row as the report gives it, without what names this run's own resources."""
    rows = json.loads(capsys.readouterr().out)["rows"]
    return [{k: v for k, v in row.items() if k not in ("item", "request")} for row in rows]


@pytest.mark.slow  # an agent run and two replays, judged: CI runs it (.ci/run)
@pytest.mark.parametrize("num_runs", ["1", "2"])
def test_a_replay_of_saved_sessions_or_traces_gives_the_same_rows_and_judge_requests(
    agent_project: FakeGemini, capsys: pytest.CaptureFixture[str], num_runs: str
) -> None:
    Path("replay_config.json").write_text(json.dumps(CONFIG))
    common = ["--config", "replay_config.json", "--format", "json", "--no-judge-cache"]
    evalset = "agents/travel.evalset.json"
    main(
        [
            "-q",
            "run",
            evalset,
            "--agent",
            "agents/travel_agent",
            "--num-runs",
            num_runs,
            "--save-sessions",
            "sessions",
            "--save-traces",
            "traces",
            *common,
        ]
    )
    ran = _rows(capsys)
    asked = judge_requests(agent_project.seen)
    assert any("You help travellers plan trips" in request for request in asked)
    assert any("book_hotel" in request for request in asked)
    for folder in ("sessions", "traces"):
        before = len(agent_project.seen)
        main(["-q", "run", evalset, "--traces", folder, *common])
        assert _rows(capsys) == ran, folder
        replayed = agent_project.seen[before:]
        assert all(not s.body.get("tools") for s in replayed), "the agent ran again"
        assert judge_requests(replayed) == asked, folder
