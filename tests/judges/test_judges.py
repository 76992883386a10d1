"""Rubric metrics and judges: local verdicts, a fake Gemini model, and rubrics nobody can decide."""

from __future__ import annotations

import json
from typing import Any

import pytest
from factories import agent_data, call, reply, request_item, user
from fake_gemini import model_judges

from platform_eval import metrics
from platform_eval import types as t
from platform_eval.emulator import Emulator
from platform_eval.metrics.judges import JudgeInput

CANDIDATE = {
    "candidate": "agent",
    "agentData": agent_data(
        [
            user("Refund order A1001"),
            call("lookup_order", order_id="A1001"),
            call("issue_refund", order_id="A1001", amount=79.99),
            reply("Refunded $79.99; it arrives in 5-7 business days."),
        ]
    ),
}


def _rubric(rubric_id: str, kind: str | None, description: Any) -> dict[str, Any]:
    text = description if isinstance(description, str) else json.dumps(description)
    body: dict[str, Any] = {"rubricId": rubric_id, "content": {"property": {"description": text}}}
    if kind:
        body["type"] = kind
    return body


def _request(
    *rubrics: dict[str, Any], candidates: list[dict[str, Any]] | None = None
) -> t.EvaluationRequest:
    return t.EvaluationRequest.model_validate(
        {
            "prompt": {"text": "Refund order A1001"},
            "rubrics": {"checks": {"groupId": "checks", "rubrics": list(rubrics)}},
            "candidateResponses": candidates or [CANDIDATE],
        }
    )


def _run(
    request: t.EvaluationRequest,
    judges: Any = metrics.DEFAULT_JUDGES,
    metric: str = "rubric_based_final_response_quality_v1",
    **params: Any,
) -> list[t.CandidateResult]:
    body: dict[str, Any] = {"metric": metric}
    if params:
        body["metricConfig"] = {"computationBasedMetricSpec": {"parameters": params}}
    spec = metrics.resolve(t.EvaluationRunMetric.model_validate(body))
    return metrics.evaluate_request([spec], request, judges)


@pytest.mark.parametrize(
    ("kind", "description", "verdict", "reason"),
    [
        ("TOOL_CALLED", "issue_refund", True, "issue_refund was called"),
        ("TOOL_CALLED", {"tool": "issue_refund", "args": {"amount": 79.99}}, True, "called"),
        (
            "TOOL_CALLED",
            {"tool": "issue_refund", "args": {"amount": 10}},
            False,
            "not with the expected arguments",
        ),
        ("TOOL_CALLED", "escalate", False, "escalate was not called"),
        ("TOOL_NOT_CALLED", "delete_account", True, "was not called"),
        ("TOOL_NOT_CALLED", "lookup_order", False, "lookup_order was called"),
        ("TEXT_CONTAINS", "$79.99", True, "contains"),
        ("TEXT_CONTAINS", {"text": "REFUNDED", "case_sensitive": True}, False, "does not contain"),
        ("TEXT_NOT_CONTAINS", "sorry", True, "does not contain"),
        ("REGEX", r"\$\d+\.\d{2}", True, "matches at '$79.99'"),
        ("REGEX", {"pattern": "BUSINESS DAYS", "flags": "i"}, True, "matches"),
        ("RESPONSE_LENGTH", {"max_words": 5}, False, "breaks ['max_words']"),
        ("RESPONSE_LENGTH", {"max_chars": 200, "min_words": 3}, True, "characters"),
    ],
)
def test_local_judge_verdicts(kind: str, description: Any, verdict: bool, reason: str) -> None:
    (result,) = _run(_request(_rubric("r", kind, description)))
    (decided,) = result.rubric_verdicts or []
    assert decided.verdict is verdict
    assert reason in (decided.reasoning or "")
    assert decided.evaluated_rubric.rubric_id == "r"
    assert result.score == (1.0 if verdict else 0.0)


def test_json_path_equals_on_a_json_answer() -> None:
    answer = {
        "candidate": "json",
        "agentData": agent_data(
            [user("q"), reply(json.dumps({"order": {"status": "shipped", "items": [1, 2]}}))]
        ),
    }
    request = _request(
        _rubric("status", "JSON_PATH_EQUALS", {"path": "$.order.status", "equals": "shipped"}),
        _rubric("second", "JSON_PATH_EQUALS", {"path": "$.order.items[1]", "equals": 2}),
        _rubric("missing", "JSON_PATH_EQUALS", {"path": "$.order.eta", "equals": "soon"}),
        candidates=[answer],
    )
    (result,) = _run(request)
    assert [v.verdict for v in result.rubric_verdicts or []] == [True, True, False]
    assert result.score == pytest.approx(2 / 3)


def test_rubrics_no_judge_can_decide_are_never_passes() -> None:
    request = _request(
        _rubric("tone", None, "The response is warm and professional."),
        _rubric("refund", "TOOL_CALLED", "issue_refund"),
    )
    (result,) = _run(request)
    # The decided rubric passed, but the score would be over a subset: no score at all.
    assert result.score is None
    assert [v.evaluated_rubric.rubric_id for v in result.rubric_verdicts or []] == ["refund"]
    assert result.additional_results is None  # nothing outside the API's schema
    assert (result.explanation or "").startswith(
        "not evaluated: 1 of 2 rubrics could not be decided: [tone] no configured judge decides"
    )
    assert (result.explanation or "").endswith("(1 of the 1 decided passed)")
    (only_free_text,) = _run(_request(_rubric("tone", None, "Warm tone.")))
    assert only_free_text.score is None
    assert (only_free_text.explanation or "").startswith("not evaluated")


def test_bad_rubric_parameters_are_reported_not_guessed() -> None:
    (result,) = _run(
        _request(
            _rubric("bad", "REGEX", {"pattern": "("}), _rubric("ok", "TEXT_CONTAINS", "refund")
        )
    )
    assert result.score is None  # a rubric whose check cannot run is not a pass
    assert "[bad] " in (result.explanation or "") and "invalid regex" in (result.explanation or "")


def test_rubric_group_option_and_missing_group() -> None:
    request = _request(_rubric("r", "TOOL_CALLED", "issue_refund"))
    (result,) = _run(request, rubric_group="checks")
    assert result.score == 1.0
    (missing,) = _run(request, rubric_group="nope")
    assert missing.score is None and "no rubric group 'nope'" in (missing.explanation or "")


def _verdicts(*entries: dict[str, Any]) -> Any:
    return lambda seen: json.dumps({"verdicts": list(entries)})


def test_the_model_judge_decides_free_text_rubrics_through_the_judging_path() -> None:
    rule = _verdicts(
        {"rubric_id": "tone", "verdict": True, "reasoning": "It thanks the customer politely."},
        {"rubric_id": "unasked", "verdict": False, "reasoning": "x"},
    )
    request = _request(
        _rubric("tone", None, "The response is warm."),
        _rubric("refund", "TOOL_CALLED", "issue_refund"),
    )
    with model_judges(rule) as (judges, fake):
        (result,) = _run(request, judges, "general_quality_v1")
        usage = judges.model.usage.total
    by_id = {v.evaluated_rubric.rubric_id: v for v in result.rubric_verdicts or []}
    assert set(by_id) == {"tone", "refund"}
    assert by_id["tone"].reasoning == "It thanks the customer politely."
    assert result.score == 1.0 and not result.additional_results
    (sent,) = fake.seen  # the typed rubric was decided by the local judge, with no call
    assert sent.model == "gemini-test"
    assert "[tone] The response is warm." in sent.prompt
    assert "agent CALLS issue_refund" in sent.prompt
    assert sent.body["generationConfig"]["responseMimeType"] == "application/json"
    assert usage.calls == 1  # counted by the judge's accounting: the product's path


def test_the_model_judge_writes_rubrics_when_there_are_none() -> None:
    rule = _verdicts(
        {
            "rubric_id": "g1",
            "rubric": "States the refund amount",
            "verdict": True,
            "reasoning": "Says $79.99.",
        },
        {"rubric_id": "g2", "rubric": "Apologizes", "verdict": False, "reasoning": "No apology."},
    )
    request = t.EvaluationRequest.model_validate(
        {"prompt": {"text": "Refund"}, "candidateResponses": [CANDIDATE]}
    )
    spec = metrics.resolve(t.EvaluationRunMetric(metric="general_quality_v1"))
    with model_judges(rule) as (judges, _):
        (result,) = metrics.evaluate_request([spec], request, judges)
    assert result.score == 0.5
    assert [v.evaluated_rubric.description for v in result.rubric_verdicts or []] == [
        "States the refund amount",
        "Apologizes",
    ]
    (without,) = metrics.evaluate_request([spec], request)
    assert without.score is None and "no model judge" in (without.explanation or "")


def test_a_metrics_own_judge_model_is_the_one_asked() -> None:
    """The service's rubric metrics ask the model their config names (judgeAutoraterConfig),
    not the run's default judge model."""
    rule = _verdicts({"rubric_id": "tone", "verdict": True, "reasoning": "warm"})
    metric = t.EvaluationRunMetric.model_validate(
        {
            "metric": "general_quality_v1",
            "rubricBasedMetricSpec": {"judgeAutoraterConfig": {"autoraterModel": "gemini-2.5-pro"}},
        }
    )
    with model_judges(rule, model="gemini-2.5-flash") as (judges, fake):
        metrics.evaluate_request(
            [metrics.resolve(metric)], _request(_rubric("tone", None, "Warm.")), judges
        )
    assert [seen.model for seen in fake.seen] == ["gemini-2.5-pro"]


def test_model_failures_become_not_evaluated() -> None:
    with model_judges(lambda seen: "{}") as (judges, fake):
        fake.fail_next(400, count=1)
        (result,) = _run(_request(_rubric("tone", None, "Warm.")), judges, "general_quality_v1")
    assert result.score is None
    assert "[tone] " in (result.explanation or "") and "failed" in (result.explanation or "")


def test_an_answer_that_is_not_the_json_asked_for_is_not_evaluated() -> None:
    with model_judges(lambda seen: "I think it is fine") as (judges, _):
        (result,) = _run(_request(_rubric("tone", None, "Warm.")), judges, "general_quality_v1")
    assert result.score is None
    assert "not the JSON asked for" in (result.explanation or "")


def test_judge_input_final_text_prefers_text() -> None:
    request = _request(_rubric("r", "TEXT_CONTAINS", "x"))
    subject = JudgeInput("m", request, t.CandidateResponse(candidate="a", text="plain"))
    assert subject.final_text == "plain"


def test_emulator_run_with_rubrics_and_several_candidates(emulator: Emulator, project: str) -> None:
    second = {
        "candidate": "other",
        "agentData": agent_data(
            [
                user("Refund order A1001"),
                call("lookup_order", order_id="A1001"),
                reply("Sorry, I cannot help."),
            ]
        ),
    }
    item = request_item("refund", prompt="Refund order A1001", candidates=[CANDIDATE, second])
    item["evaluationRequest"]["rubrics"] = {
        "checks": {
            "groupId": "checks",
            "rubrics": [
                _rubric("refunded", "TOOL_CALLED", "issue_refund"),
                _rubric("amount", "TEXT_CONTAINS", "$79.99"),
                _rubric("tone", None, "Warm tone."),
            ],
        }
    }
    with emulator.client(project) as client:
        created = client.create_item(item)
        evaluation_set = client.create_set(display_name="rubrics", items=[created])
        run = client.wait_for_run(
            client.create_run(
                evaluation_set=evaluation_set, metrics=["rubric_based_final_response_quality_v1"]
            ),
            poll_interval=0.02,
            timeout=30,
        )
        (result,) = client.get_results(run)
    scores = {r.candidate: r.score for r in result.evaluation_response.candidate_results}
    assert scores == {"agent": None, "other": None}
    for candidate_result in result.evaluation_response.candidate_results:
        assert len(candidate_result.rubric_verdicts) == 2
        assert all(v.reasoning for v in candidate_result.rubric_verdicts)
        assert "could not be decided: [tone]" in (candidate_result.explanation or "")
    assert "rubric_based_final_response_quality_v1/AVERAGE" not in run.summary
    assert result.error is not None  # the run counts the item as failed


def test_a_finished_run_leaves_nothing_behind_in_the_judge() -> None:
    """A long-lived emulator keeps no per-run state in its judge once a run ended: the run's
    judge cost is kept with the run (run_judge_usage), not in the judge's memory."""
    verdict = '{"reasoning": "r", "is_the_agent_response_valid": "valid"}'
    with model_judges(lambda seen: verdict) as (judges, fake):
        item = request_item("refund", prompt="Refund order A1001", candidates=[CANDIDATE])
        golden = [user("Refund order A1001"), reply("Refunded $79.99 to A1001.")]
        item["evaluationRequest"]["goldenResponse"] = {"agentData": agent_data(golden)}
        with Emulator(judges=judges) as emulator, emulator.client("p") as client:
            created = client.create_item(item)
            evaluation_set = client.create_set(display_name="judged", items=[created])
            run = client.wait_for_run(
                client.create_run(
                    evaluation_set=evaluation_set, metrics=["final_response_match_v2"]
                ),
                poll_interval=0.02,
                timeout=30,
            )
            usage = client.run_judge_usage(run)
        assert fake.seen, (run.state, run.error, run.summary)
        assert usage is not None and usage["calls"] >= 1
        assert judges.model.usage_by_evaluation == {}
        assert judges.model._waiting == {} and judges.model._cancelled == set()
