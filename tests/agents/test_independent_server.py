"""``run --agent URL`` against a server that is not google-adk's: a second implementation of the
api_server API (tests/independent_api_server.py), standing in for an ADK Java, Go or TypeScript
agent. Its tool calls make the trajectory, its session's state the final state, and what it
cannot give (streaming, app details) is said, not guessed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from independent_api_server import APP, independent_api_server

from platform_eval import jobs
from platform_eval.agents.remote import ServedAgent
from platform_eval.cli import main
from platform_eval.client import Client
from platform_eval.results import fetch_results


def _case(eval_id: str, cities: list[str], state: dict[str, Any]) -> dict[str, Any]:
    weather = {"Oslo": "snowy", "Rome": "sunny", "Lima": "cloudy"}
    return {
        "eval_id": eval_id,
        "conversation": [
            {
                "invocation_id": f"turn-{n}",
                "user_content": {
                    "role": "user",
                    "parts": [{"text": f"What is the weather in {city}?"}],
                },
                "final_response": {
                    "role": "model",
                    "parts": [{"text": f"It is {weather[city]} in {city}."}],
                },
                "intermediate_data": {
                    "tool_uses": [{"name": "get_weather", "args": {"city": city}}]
                },
            }
            for n, city in enumerate(cities)
        ],
        "session_input": {"app_name": APP, "user_id": "tester", "state": state},
        "final_session_state": {**state, "last_city": cities[-1]},
    }


EVAL_SET = {
    "eval_set_id": "weather",
    "eval_cases": [
        _case("oslo", ["Oslo"], {"units": "metric"}),
        _case("rome_then_lima", ["Rome", "Lima"], {}),
    ],
}
METRICS = ["tool_trajectory_avg_score", "response_match_score", "final_session_state_match"]


@pytest.fixture
def evalset(tmp_path: Path) -> Path:
    path = tmp_path / "weather.evalset.json"
    path.write_text(json.dumps(EVAL_SET))
    return path


def _scores(client: Client, evaluation: jobs.Evaluation) -> dict[tuple[str, str], float | None]:
    results = fetch_results(
        client,
        evaluation.run,
        items=evaluation.results,
        case_ids=evaluation.upload.case_ids,
    )
    return {(row.eval_case_id, row.metric): row.score for row in results.rows}


def test_an_agent_served_by_another_implementation_is_evaluated_with_its_trajectory_and_state(
    sync_client: Client, evalset: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with independent_api_server() as url:
        evaluation = jobs.evaluate(
            sync_client,
            str(evalset),
            agent=ServedAgent(url),
            metrics=METRICS,
            save_sessions=tmp_path / "sessions",
            resume=False,
        )
    scores = _scores(sync_client, evaluation)
    assert {case for case, _ in scores} == {"oslo", "rome_then_lima"}
    assert all(score == 1.0 for score in scores.values()), scores
    report = evaluation.agent_runs
    assert report is not None and not any(run.error for run in report.runs)
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert said.count(f"{url} has no /run_sse: turns sent to /run") == 1, said
    assert any("gives no app details" in line for line in said), said
    saved = sorted((tmp_path / "sessions").iterdir())
    assert len(saved) == 2
    session = json.loads(saved[1].read_text())
    calls = [
        p["functionCall"]["args"]["city"]
        for e in session["events"]
        for p in (e.get("content") or {}).get("parts") or []
        if "functionCall" in p
    ]
    assert calls == ["Rome", "Lima"]  # the trajectory as the server recorded it
    assert session["state"] == {"last_city": "Lima"}


def test_a_wrong_answer_of_the_other_server_fails_as_it_should(
    sync_client: Client, tmp_path: Path
) -> None:
    """The scores are read from what the server did, not assumed: a case expecting another
    city's weather and state fails the trajectory, the answer and the state."""
    wrong = _case("oslo", ["Oslo"], {})
    wrong["conversation"][0]["intermediate_data"]["tool_uses"][0]["args"]["city"] = "Bergen"
    wrong["conversation"][0]["final_response"]["parts"][0]["text"] = "It rains in Bergen."
    wrong["final_session_state"] = {"last_city": "Bergen"}
    path = tmp_path / "wrong.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "wrong", "eval_cases": [wrong]}))
    with independent_api_server() as url:
        evaluation = jobs.evaluate(
            sync_client, str(path), agent=ServedAgent(url), metrics=METRICS, resume=False
        )
    scores = _scores(sync_client, evaluation)
    assert scores[("oslo", "tool_trajectory_avg_score")] == 0.0
    assert scores[("oslo", "final_session_state_match")] == 0.0
    assert (scores[("oslo", "response_match_score")] or 0.0) < 0.5


def test_the_command_line_runs_the_other_server_alike(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "weather.evalset.json").write_text(json.dumps(EVAL_SET))
    with independent_api_server() as url:
        code = main(
            [
                "-q",
                "run",
                "weather.evalset.json",
                "--agent",
                url,
                "--metrics",
                ",".join(METRICS),
                *(f"--threshold={metric}=1" for metric in METRICS),
                "--format",
                "json",
            ]
        )
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0, rows
    assert len(rows) == 2 * len(METRICS)
    assert {r["status"] for r in rows} == {"PASSED"}
