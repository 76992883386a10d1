"""Score for score agreement with google-adk's own evaluators, on the corpus and generated cases."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from conftest import CORPUS
from corpus_files import EVAL_SETS

from platform_eval import formats, metrics
from platform_eval import types as t
from platform_eval.formats import adk
from platform_eval.formats.convert import expected_agent_data

adk_eval_case = pytest.importorskip("google.adk.evaluation.eval_case")
adk_metrics = pytest.importorskip("google.adk.evaluation.eval_metrics")
adk_trajectory = pytest.importorskip("google.adk.evaluation.trajectory_evaluator")
adk_rouge = pytest.importorskip("google.adk.evaluation.final_response_match_v1")

MATCH_TYPES = ["EXACT", "IN_ORDER", "ANY_ORDER"]


def _perturb(case: adk.EvalCase, rng: random.Random) -> adk.EvalCase:
    """An 'actual' run of the case: tool calls dropped, swapped, duplicated or changed, text edited."""
    actual = copy.deepcopy(case)
    for invocation in actual.conversation or []:
        data = invocation.intermediate_data
        calls = invocation.tool_calls()
        if calls:
            choice = rng.randrange(6)
            new = [c.model_copy(deep=True) for c in calls]
            if choice == 0:
                new.pop(rng.randrange(len(new)))
            elif choice == 1 and len(new) > 1:
                new.reverse()
            elif choice == 2:
                new.insert(
                    rng.randrange(len(new) + 1), t.FunctionCall(name="extra_tool", args={"x": 1})
                )
            elif choice == 3:
                target = new[rng.randrange(len(new))]
                target.args = {**(target.args or {}), "changed": True}
            elif choice == 4:
                new.append(new[0].model_copy(deep=True))
            invocation.intermediate_data = adk.IntermediateData(tool_uses=new)
        elif data is not None and rng.random() < 0.3:
            invocation.intermediate_data = adk.IntermediateData(
                tool_uses=[t.FunctionCall(name="surprise", args={})]
            )
        final = invocation.final_response
        if final and final.parts and rng.random() < 0.7:
            words = " ".join(p.text for p in final.parts if p.text).split()
            rng.shuffle(words)
            keep = words[: max(1, len(words) * rng.randint(1, 4) // 4)]
            invocation.final_response = t.Content(
                role="model", parts=[t.Part(text=" ".join([*keep, "indeed", "running"]))]
            )
    return actual


def _adk_invocations(case: adk.EvalCase) -> list[Any]:
    return [
        adk_eval_case.Invocation.model_validate(i.to_json_dict()) for i in case.conversation or []
    ]


def _ours(expected: adk.EvalCase, actual: adk.EvalCase, metric: dict[str, Any]) -> float | None:
    request = t.EvaluationRequest(
        prompt=t.EvaluationPrompt(text="q"),
        golden_response=t.CandidateResponse(agent_data=expected_agent_data(expected, "agent")),
        candidate_responses=[
            t.CandidateResponse(candidate="actual", agent_data=expected_agent_data(actual, "agent"))
        ],
    )
    (result,) = metrics.evaluate_request(
        [metrics.resolve(t.EvaluationRunMetric.model_validate(metric))], request
    )
    return result.score


def _adk_trajectory(
    expected: adk.EvalCase, actual: adk.EvalCase, match_type: str, ignore_args: bool
) -> float:
    criterion = adk_metrics.ToolTrajectoryCriterion(
        threshold=1.0,
        match_type=adk_metrics.ToolTrajectoryCriterion.MatchType[match_type],
        ignore_args=ignore_args,
    )
    evaluator = adk_trajectory.TrajectoryEvaluator(
        eval_metric=adk_metrics.EvalMetric(
            metric_name="tool_trajectory_avg_score", criterion=criterion
        )
    )
    return float(
        evaluator.evaluate_invocations(
            _adk_invocations(actual), _adk_invocations(expected)
        ).overall_score
    )


def _adk_rouge(expected: adk.EvalCase, actual: adk.EvalCase) -> float:
    evaluator = adk_rouge.RougeEvaluator(
        adk_metrics.EvalMetric(metric_name="response_match_score", threshold=0.5)
    )
    return float(
        evaluator.evaluate_invocations(
            _adk_invocations(actual), _adk_invocations(expected)
        ).overall_score
    )


def _cases() -> list[tuple[str, adk.EvalCase]]:
    out = []
    for name in EVAL_SETS:
        for case in formats.load_eval_set(CORPUS / name).eval_cases:
            if case.conversation:
                out.append((f"{name}:{case.eval_id}", case))
    return out


# Without the corpus one placeholder case stands in, skipped by the corpus marker.
CASES = _cases() if CORPUS.is_dir() else [("corpus-missing", None)]


@pytest.mark.corpus
@pytest.mark.parametrize(("case_id", "case"), CASES, ids=[c for c, _ in CASES])
def test_agreement_on_the_corpus(case_id: str, case: adk.EvalCase) -> None:
    rng = random.Random(case_id)
    for attempt in range(6):
        actual = case if attempt == 0 else _perturb(case, rng)
        for match_type in MATCH_TYPES:
            for ignore_args in (False, True):
                ours = _ours(
                    case,
                    actual,
                    {
                        "metric": "tool_trajectory_avg_score",
                        "metricConfig": {
                            "computationBasedMetricSpec": {
                                "parameters": {"match_type": match_type, "ignore_args": ignore_args}
                            }
                        },
                    },
                )
                assert ours == _adk_trajectory(case, actual, match_type, ignore_args), (
                    match_type,
                    ignore_args,
                )
        has_text = all(
            i.final_response and any(p.text for p in i.final_response.parts or [])
            for i in case.conversation or []
        )
        if has_text:
            assert _ours(case, actual, {"metric": "response_match_score"}) == pytest.approx(
                _adk_rouge(case, actual), abs=1e-12
            )


def _generated(rng: random.Random, index: int) -> adk.EvalCase:
    tools = ["search", "get_weather", "book", "cancel"]
    vocabulary = [
        "the",
        "flight",
        "to",
        "Paris",
        "is",
        "booked",
        "running",
        "runs",
        "ran",
        "台北",
        "天氣",
        "晴",
        "ＡＢＣ",
        "café",
        "naïve",
        "Ｔｅｓｔ",
    ]
    conversation = []
    for turn in range(rng.randint(1, 3)):
        calls = [
            {
                "name": rng.choice(tools),
                "args": {"n": rng.choice([1, 1.0, "1", True]), "k": rng.choice(["a", "b"])},
            }
            for _ in range(rng.randint(0, 3))
        ]
        text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 8)))
        conversation.append(
            {
                "invocation_id": f"g{index}-{turn}",
                "user_content": {"role": "user", "parts": [{"text": f"turn {turn}"}]},
                "final_response": {"role": "model", "parts": [{"text": text}]},
                "intermediate_data": {"tool_uses": calls},
            }
        )
    return adk.EvalCase.model_validate({"eval_id": f"gen-{index}", "conversation": conversation})


def test_agreement_on_generated_cases() -> None:
    rng = random.Random(2026)
    compared = 0
    for index in range(150):
        expected = _generated(rng, index)
        actual = _perturb(expected, rng) if rng.random() < 0.6 else _generated(rng, index)
        if len(actual.conversation or []) != len(expected.conversation or []):
            continue
        for match_type in MATCH_TYPES:
            metric = {
                "metric": "tool_trajectory_avg_score",
                "metricConfig": {
                    "computationBasedMetricSpec": {"parameters": {"match_type": match_type}}
                },
            }
            assert _ours(expected, actual, metric) == _adk_trajectory(
                expected, actual, match_type, False
            )
        assert _ours(expected, actual, {"metric": "response_match_score"}) == pytest.approx(
            _adk_rouge(expected, actual), abs=1e-12
        )
        compared += 1
    assert compared > 60
