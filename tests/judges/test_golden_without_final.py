"""A golden turn with intermediate responses and no final response: ADK's reference for
final_response_match_v2 is empty there (include_intermediate_responses_in_final is false by
default), never the last intermediate text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_gemini import adk_judge_rule, model_judges

pytest.importorskip("google.adk.evaluation.final_response_match_v2")

from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_case import Invocation as AdkInvocation
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.final_response_match_v2 import FinalResponseMatchV2Evaluator

from platform_eval import metrics
from platform_eval import types as t
from platform_eval.formats import adk
from platform_eval.formats.convert import case_to_request

CASE = {
    "eval_id": "handoff",
    "conversation": [
        {
            "invocation_id": "t1",
            "user_content": {"role": "user", "parts": [{"text": "Plan my trip to Rome."}]},
            "intermediate_data": {
                "tool_uses": [],
                "intermediate_responses": [
                    ["planner", [{"text": "Let me ask the booking agent."}]],
                ],
            },
        }
    ],
}
ANSWER = "Your trip to Rome is booked."


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def _adk_prompt(include_intermediate: bool) -> str:
    expected = AdkEvalCase.model_validate(CASE).conversation[0]
    actual = AdkInvocation.model_validate(
        {
            "invocation_id": "t1",
            "user_content": CASE["conversation"][0]["user_content"],
            "final_response": _text("model", ANSWER),
        }
    )
    criterion = {"threshold": 0.0, "include_intermediate_responses_in_final": include_intermediate}
    evaluator = FinalResponseMatchV2Evaluator(
        EvalMetric(
            metric_name="final_response_match_v2",
            threshold=0.0,
            criterion=FinalResponseMatchV2Evaluator.criterion_type.model_validate(criterion),
        )
    )
    return str(evaluator.format_auto_rater_prompt(actual, expected))


@pytest.mark.parametrize("include_intermediate", [False, True])
def test_the_reference_is_what_adk_makes_of_that_turn(include_intermediate: bool) -> None:
    request, _ = case_to_request(adk.EvalCase.model_validate(CASE))
    request = request.model_copy(
        update={
            "candidate_responses": [
                t.CandidateResponse.model_validate(
                    {
                        "candidate": "agent",
                        "agentData": {
                            "turns": [
                                {
                                    "turnIndex": 0,
                                    "events": [
                                        {
                                            "author": "user",
                                            "content": _text("user", "Plan my trip to Rome."),
                                        },
                                        {"author": "agent", "content": _text("model", ANSWER)},
                                    ],
                                }
                            ]
                        },
                    }
                )
            ]
        }
    )
    criterion = {
        "judge_model_options": {"num_samples": 1},
        "include_intermediate_responses_in_final": include_intermediate,
    }
    spec = metrics.resolve(
        t.EvaluationRunMetric.model_validate(
            {
                "metric": "final_response_match_v2",
                "metricConfig": {
                    "computationBasedMetricSpec": {"parameters": {"criterion": criterion}}
                },
            }
        )
    )
    with model_judges(adk_judge_rule) as (judges, fake):
        [result] = metrics.evaluate_request([spec], request, judges)
    assert result.score is not None
    [asked] = fake.seen
    assert asked.prompt == _adk_prompt(include_intermediate)
    reference = json.dumps("Let me ask the booking agent.")[1:-1]
    assert (reference in asked.prompt.split('"Reference response":')[1]) is include_intermediate
