"""``run --agent CARD_URL``: an A2A peer as the agent under test, google-adk's ``to_a2a``
serving the sample agent (the a2a-sdk's server, in a process of its own) and google-adk's ``RemoteA2aAgent`` calling it
(the a2a-sdk's client): its tool calls reach the trajectory, its answers the response metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("a2a")

from fake_gemini import FakeGemini
from served_agents import a2a_peer

from platform_eval.cli import main

CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}


def _scores(capsys: pytest.CaptureFixture[str]) -> dict[tuple[str, str], Any]:
    rows = json.loads(capsys.readouterr().out)["rows"]
    return {(r["evalCaseId"], r["metric"]): r["score"] for r in rows}


@pytest.mark.slow  # an A2A server and two agent runs: CI runs it (.ci/run)
def test_an_a2a_peer_is_evaluated_with_its_tool_calls_in_the_trajectory(
    agent_project: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    run = ["-q", "run", "agents/travel.evalset.json", "--config", "eval_config.json",
           "--format", "json"]  # fmt: skip
    main([*run, "--agent", "agents/travel_agent"])
    here = _scores(capsys)
    with a2a_peer(tmp_path / "agents" / "travel_agent") as card:
        main([*run, "--agent", card, "--save-sessions", "a2a"])
        there = _scores(capsys)
    trajectory = {k: v for k, v in there.items() if k[1] == "tool_trajectory_avg_score"}
    assert trajectory == {k: v for k, v in here.items() if k[1] == "tool_trajectory_avg_score"}
    assert trajectory[("weather_then_booking", "tool_trajectory_avg_score")] == 1.0
    # A2A carries no session state: a case that greets by a name in its state differs.
    stateless = {k: v for k, v in there.items() if k[0] != "who_am_i"}
    assert stateless == {k: v for k, v in here.items() if k[0] != "who_am_i"}
    session = json.loads(next(Path("a2a").glob("weather_paris*.json")).read_text())
    calls = [
        part["functionCall"]["name"]
        for event in session["events"]
        for part in (event.get("content") or {}).get("parts") or []
        if "functionCall" in part
    ]
    assert calls == ["get_weather"]
