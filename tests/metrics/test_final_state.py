"""``final_session_state_match``: the case's golden final state against the candidate's (the
initial state with its events' state deltas), by hand over nested state with rules; and from
an agent run, whose tools write the state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import agent_data, reply, user

from platform_eval import metrics
from platform_eval import types as t

GOLDEN_STATE = {
    "booking": {"city": "Rome", "nights": 2, "price": 240.0, "confirmation": "ROM-2"},
    "user_name": "Ada",
    "updated_at": "2026-11-24T02:00:00Z",
}


def _state_event(delta: dict[str, Any]) -> dict[str, Any]:
    event = reply("noted")
    event["stateDelta"] = delta
    return event


def _score(
    deltas: list[dict[str, Any]],
    *,
    initial: dict[str, Any] | None = None,
    golden: dict[str, Any] | None = GOLDEN_STATE,
    keys_match: dict[str, Any] | None = None,
) -> t.CandidateResult:
    request = t.EvaluationRequest.model_validate(
        {
            "prompt": {"text": "q"},
            "candidateResponses": [
                {"candidate": "a", "agentData": agent_data([user("q"), *map(_state_event, deltas)])}
            ],
        }
    )
    metadata: dict[str, Any] = {}
    if golden is not None:
        metadata["finalSessionState"] = golden
    if initial is not None:
        metadata["sessionInput"] = {"app_name": "a", "user_id": "u", "state": initial}
    body: dict[str, Any] = {"metric": "final_session_state_match"}
    if keys_match is not None:
        body["metricConfig"] = {
            "computationBasedMetricSpec": {"parameters": {"keys_match": keys_match}}
        }
    spec = metrics.resolve(t.EvaluationRunMetric.model_validate(body))
    [result] = metrics.evaluate_request([spec], request, metadata=metadata)
    return result


BOOKED = {"city": "Rome", "nights": 2, "price": 240.0, "confirmation": "ROM-2"}


def test_every_value_matched_is_one() -> None:
    result = _score(
        [{"booking": BOOKED}, {"updated_at": "2026-11-24T02:00:00Z"}], initial={"user_name": "Ada"}
    )
    assert result.score == 1.0 and result.explanation == "6 of 6 state values match"


def test_the_score_is_the_share_of_golden_leaves_matched_and_names_those_that_differ() -> None:
    # The initial state gives user_name; the deltas apply in order (the later booking wins).
    result = _score(
        [{"booking": {**BOOKED, "nights": 1}}, {"booking": {**BOOKED, "price": 241.0}}],
        initial={"user_name": "Ada"},
    )
    # 6 leaves: booking.{city, nights, price, confirmation}, user_name, updated_at (missing).
    assert result.score == pytest.approx(4 / 6)
    assert "booking.price: 241.0 vs 240.0 (exact)" in result.explanation
    assert "updated_at: missing (exact)" in result.explanation


def test_tolerance_and_ignore_rules_on_dotted_paths() -> None:
    rules = {
        "booking.price": {"tolerance": 5},
        "updated_at": "ignore",
        "booking.confirmation": {"regex": "[A-Z]{3}-\\d+"},
    }
    result = _score(
        [{"booking": {**BOOKED, "price": 243.5, "confirmation": "ROM-77"}}],
        initial={"user_name": "Ada"},
        keys_match=rules,
    )
    # updated_at is ignored: 5 leaves count, all matched.
    assert result.score == 1.0 and result.explanation == "5 of 5 state values match"
    beyond = _score(
        [{"booking": {**BOOKED, "price": 250}}], initial={"user_name": "ada"}, keys_match=rules
    )
    assert beyond.score == pytest.approx(3 / 5)
    rules["user_name"] = "case_insensitive"
    assert (
        _score([{"booking": BOOKED}], initial={"user_name": "ADA"}, keys_match=rules).score == 1.0
    )


def test_a_rule_on_an_object_counts_it_as_one_value() -> None:
    rules = {"booking": "ignore"}
    result = _score(
        [{"updated_at": "2026-11-24T02:00:00Z"}], initial={"user_name": "Ada"}, keys_match=rules
    )
    assert result.score == 1.0 and result.explanation == "2 of 2 state values match"


def test_extra_state_keys_do_not_count_and_temp_keys_are_not_kept() -> None:
    result = _score(
        [
            {"booking": BOOKED, "cart": [1, 2], "temp:draft": "x"},
            {"updated_at": "2026-11-24T02:00:00Z"},
        ],
        initial={"user_name": "Ada"},
        golden={**GOLDEN_STATE, "temp:draft": "x"},
    )
    assert result.score == pytest.approx(6 / 7)
    assert "temp:draft: missing" in result.explanation


def test_a_case_without_a_golden_state_is_not_applicable_saying_so() -> None:
    result = _score([{"booking": BOOKED}], golden=None)
    assert result.score is None and "no final_session_state" in (result.explanation or "")
    assert metrics.not_applicable(result.explanation)


def test_an_unknown_keys_match_rule_is_an_error_naming_it() -> None:
    with pytest.raises(
        metrics.MetricError, match=r"keys_match.booking.city: unknown rule 'similar'"
    ):
        _score([], keys_match={"booking.city": "similar"})


def test_an_agent_runs_tools_write_the_state_that_is_checked(
    agent_project: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from platform_eval.cli import main

    eval_set = json.loads((tmp_path / "agents" / "travel.evalset.json").read_text())
    case = eval_set["eval_cases"][1]  # weather, then a booking
    case["session_input"] = {"app_name": "travel", "user_id": "u", "state": {"user_name": "Ada"}}
    case["final_session_state"] = {
        "user_name": "Ada",
        "booking": {"city": "rome", "nights": 2, "confirmation": "ROM-3"},
    }
    eval_set["eval_cases"] = [case]
    (tmp_path / "booking.evalset.json").write_text(json.dumps(eval_set))
    config = {
        "criteria": {
            "final_session_state_match": {
                "threshold": 1.0,
                "keys_match": {"booking.city": "case_insensitive"},
            }
        }
    }
    (tmp_path / "eval_config.json").write_text(json.dumps(config))
    code = main(
        [
            "-q",
            "run",
            "booking.evalset.json",
            "--agent",
            "agents/travel_agent",
            "--config",
            "eval_config.json",
            "--format",
            "json",
        ]
    )
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert code == 1
    assert row["score"] == pytest.approx(3 / 4)
    assert row["explanation"] == (
        '3 of 4 state values match; differ: booking.confirmation: "ROM-2" vs "ROM-3" (exact)'
    )


def test_cases_with_no_final_state_are_not_applicable_and_do_not_fail_the_run(
    agent_project: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """final_session_state_match added to a set where most cases have no final_session_state:
    those are NOT_APPLICABLE (never a pass, never a failure); the case that has one decides."""
    from platform_eval.cli import main

    eval_set = json.loads((tmp_path / "agents" / "travel.evalset.json").read_text())
    eval_set["eval_cases"][1]["final_session_state"] = {
        "booking": {"city": "rome", "nights": 2, "confirmation": "ROM-2"}
    }
    (tmp_path / "state.evalset.json").write_text(json.dumps(eval_set))
    config = {
        "criteria": {
            "final_session_state_match": {
                "threshold": 1.0,
                "keys_match": {"booking.city": "case_insensitive"},
            }
        }
    }
    (tmp_path / "state_config.json").write_text(json.dumps(config))
    command = ["-q", "run", "state.evalset.json", "--agent", "agents/travel_agent"]
    code = main([*command, "--config", "state_config.json", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    statuses = {row["evalCaseId"]: row["status"] for row in report["rows"]}
    assert statuses == {
        "weather_paris": "NOT_APPLICABLE",
        "weather_then_booking": "PASSED",
        "who_am_i": "NOT_APPLICABLE",
        "weather_oslo": "NOT_APPLICABLE",
    }
    assert code == 0 and report["verdict"] == "PASSED"
    not_applicable = next(r for r in report["rows"] if r["evalCaseId"] == "who_am_i")
    assert not_applicable["passed"] is None


@pytest.mark.slow  # seconds of its own: CI runs it (.ci/run)
def test_saved_sessions_and_traces_score_the_final_state_as_the_run_did(
    agent_project: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """google-adk keeps session state out of its spans: --save-traces puts the session's
    state at its end on its last invocation span, so a replay of either saved form scores
    final_session_state_match as the run did. Spans without it (another recorder's) are
    NOT_EVALUATED saying why, never a wrong number."""
    from platform_eval.cli import main

    eval_set = json.loads((tmp_path / "agents" / "travel.evalset.json").read_text())
    case = eval_set["eval_cases"][1]  # weather, then a booking
    case["final_session_state"] = {
        "booking": {"city": "Rome", "nights": 2, "confirmation": "ROM-2"}
    }
    eval_set["eval_cases"] = [case]
    (tmp_path / "booking.evalset.json").write_text(json.dumps(eval_set))
    config = {"criteria": {"final_session_state_match": 1.0}}
    (tmp_path / "state_config.json").write_text(json.dumps(config))
    common = ["run", "booking.evalset.json", "--config", "state_config.json", "--format", "json"]

    def row(*extra: str) -> dict[str, Any]:
        main(["-q", *common, *extra])
        [found] = json.loads(capsys.readouterr().out)["rows"]
        return found  # type: ignore[no-any-return]

    ran = row("--agent", "agents/travel_agent", "--save-sessions", "s", "--save-traces", "t")
    assert ran["score"] == 1.0
    assert row("--traces", "s")["score"] == 1.0
    assert row("--traces", "t")["score"] == 1.0
    [saved] = (tmp_path / "t").glob("*.otlp.json")
    saved.write_text(saved.read_text().replace("platform_eval.session.state", "other.key"))
    from_traces = row("--traces", "t")
    assert from_traces["score"] is None and from_traces["status"] == "NOT_EVALUATED"
    assert "OpenTelemetry traces do not carry session state" in from_traces["explanation"]


def test_a_metric_that_applied_to_no_case_is_never_passed() -> None:
    from platform_eval.results.model import Row, RunResults, Status
    from platform_eval.types import EvaluationRun

    run = EvaluationRun.model_validate({"name": "projects/p/locations/l/evaluationRuns/1"})
    run.state = "SUCCEEDED"  # type: ignore[assignment]
    why = "not applicable: the eval case has no final_session_state"
    rows = [
        Row(f"c{i}", "i", None, "a", "final_session_state_match", None, 1.0, why) for i in range(2)
    ]
    [summary] = RunResults(run, rows).summary()
    assert summary.status == Status.NOT_APPLICABLE and summary.scored == 0


@pytest.mark.parametrize(
    ("state", "score"),
    [({}, 0.0), ({"booking": {"city": "Rome", "nights": 2, "confirmation": "ROM-2"}}, 1.0)],
    ids=["explicitly-empty", "as-expected"],
)
def test_a_session_exports_recorded_state_is_the_candidates_state(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    state: dict[str, Any],
    score: float,
) -> None:
    """An ADK session export carries its state, an empty one too: that is the candidate's final
    state (before, ``"state": {}`` with no state deltas was NOT_EVALUATED, explained as if it
    were an OpenTelemetry trace)."""
    from conftest import work_offline

    from platform_eval.cli import main

    work_offline(tmp_path, monkeypatch)
    expected = {"booking": {"city": "Rome", "nights": 2, "confirmation": "ROM-2"}}
    eval_set = {
        "eval_set_id": "bookings",
        "eval_cases": [
            {
                "eval_id": "book_rome",
                "conversation": [
                    {
                        "invocation_id": "i1",
                        "user_content": {"role": "user", "parts": [{"text": "Book Rome"}]},
                        "final_response": {"role": "model", "parts": [{"text": "Booked."}]},
                    }
                ],
                "final_session_state": expected,
            }
        ],
    }
    session = {
        "id": "book_rome",
        "appName": "travel",
        "userId": "u",
        "state": state,
        "events": [
            {
                "author": "user",
                "invocationId": "i1",
                "content": {"role": "user", "parts": [{"text": "Book Rome"}]},
            },
            {
                "author": "travel_agent",
                "invocationId": "i1",
                "content": {"role": "model", "parts": [{"text": "Booked."}]},
            },
        ],
    }
    (tmp_path / "set.evalset.json").write_text(json.dumps(eval_set))
    (tmp_path / "session.json").write_text(json.dumps(session))
    (tmp_path / "config.json").write_text(
        json.dumps({"criteria": {"final_session_state_match": 1.0}})
    )
    main(
        [
            "-q",
            "run",
            "set.evalset.json",
            "--traces",
            "session.json",
            "--config",
            "config.json",
            "--format",
            "json",
        ]
    )
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert row["status"] == ("PASSED" if score else "FAILED"), row
    assert row["score"] == score
