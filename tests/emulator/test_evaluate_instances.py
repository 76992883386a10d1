""":evaluateInstances on the emulator: the official SDK's ``client.evals.evaluate()`` runs
offline, with the numbers our engine gives a run for the same inputs.

The official SDK (google-cloud-aiplatform) is the client, unchanged, pointed at the emulator;
judged metrics are judged by the product's judges asking a fake Gemini server on loopback.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from factories import request_item
from fake_gemini import Seen, model_judges

from platform_eval import errors, metrics
from platform_eval.emulator import Emulator
from platform_eval.metrics.instances import JUDGED_INPUTS, LEGACY_INPUTS, UNIMPLEMENTED_INPUTS
from platform_eval.types import EvaluationRequest, EvaluationRunMetric

pd = pytest.importorskip("pandas")
pytest.importorskip("agentplatform")

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

ROWS = [
    ("Weather in Paris?", "It is sunny in Paris today", "It is sunny in Paris"),
    ("Capital of France?", "Paris", "Paris"),
    ("Largest planet?", "Saturn is the largest", "Jupiter is the largest planet"),
]
TEMPLATE = "Rate {response} as an answer to {prompt}. Score 1 to 5."


def _judge(seen: Seen) -> str:
    """Scores 4 for a custom template; two rubrics, one met, for a predefined rubric metric."""
    if '{"verdicts"' in seen.prompt:
        metric = re.search(r"metric '([a-z0-9_]+)'", seen.prompt)
        name = metric.group(1) if metric else "?"
        met = "Paris" in seen.prompt
        return json.dumps(
            {
                "verdicts": [
                    {"rubric_id": f"{name}-1", "rubric": "on topic", "verdict": True},
                    {"rubric_id": f"{name}-2", "rubric": "correct", "verdict": met},
                ]
            }
        )
    score = 5 if "Paris" in seen.prompt else 2
    return json.dumps({"score": score, "explanation": f"judged {score}"})


@pytest.fixture(scope="module")
def judged() -> Iterator[tuple[Emulator, Any]]:
    with model_judges(_judge) as (judges, _), Emulator(judges=judges) as emulator:
        yield emulator, judges


def _official(url: str, project: str) -> Any:
    from google.oauth2.credentials import Credentials

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import agentplatform

        return agentplatform.Client(
            project=project,
            location="us-central1",
            credentials=Credentials(token="test-token"),  # type: ignore[no-untyped-call]
            http_options={"base_url": url},
        )


def _dataset(responses: list[str] | None = None) -> Any:
    from agentplatform import types as vt

    frame = pd.DataFrame(
        {
            "prompt": [p for p, _, _ in ROWS],
            "response": responses or [r for _, r, _ in ROWS],
            "reference": [g for _, _, g in ROWS],
        }
    )
    return vt.EvaluationDataset(eval_dataset_df=frame)


def _ours(
    metric: EvaluationRunMetric, judges: Any, responses: list[str] | None = None
) -> list[Any]:
    """Our engine's scores of the same rows, as a run computes them."""
    spec = metrics.resolve(metric)
    scores = []
    for (prompt, response, reference), own in zip(ROWS, responses or [None] * 3, strict=True):
        request = EvaluationRequest.model_validate(
            {
                "prompt": {"text": prompt},
                "goldenResponse": {"text": reference},
                "candidateResponses": [{"candidate": "a", "text": own or response}],
            }
        )
        (result,) = metrics.evaluate_request([spec], request, judges)
        scores.append(result.score)
    return scores


def _scores(result: Any, name: str, candidate: int = 0) -> list[Any]:
    return [
        case.response_candidate_results[candidate].metric_results[name].score
        for case in result.eval_case_results
    ]


def _errors(result: Any) -> list[str]:
    return [
        f"{name}: {value.error_message}"
        for case in result.eval_case_results
        for candidate in case.response_candidate_results
        for name, value in candidate.metric_results.items()
        if value.error_message
    ]


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_the_sdks_computation_metrics_equal_our_engines(project: str, emulator: Emulator) -> None:
    from agentplatform import types as vt

    names = ["exact_match", "bleu", "rouge_1", "rouge_l_sum"]
    result = _official(emulator.url, project).evals.evaluate(
        dataset=_dataset(), metrics=[vt.Metric(name=n) for n in names]
    )
    assert _errors(result) == []
    judges = metrics.DEFAULT_JUDGES
    for name in names:
        assert _scores(result, name) == _ours(EvaluationRunMetric(metric=name), judges), name
    assert _scores(result, "exact_match") == [0.0, 1.0, 0.0]


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
def test_an_llm_metric_a_rubric_metric_and_a_custom_function_with_two_candidates(
    judged: tuple[Emulator, Any], project: str
) -> None:
    from agentplatform import types as vt

    emulator, judges = judged
    other = ["Cloudy", "Lyon", "Jupiter"]
    llm = vt.LLMMetric(name="helpful", prompt_template=TEMPLATE)
    length = vt.Metric(name="short", custom_function=lambda row: {"score": 1.0})
    result = _official(emulator.url, project).evals.evaluate(
        dataset=[_dataset(), _dataset(other)],
        metrics=[llm, vt.RubricMetric.GENERAL_QUALITY, length],
    )
    assert _errors(result) == []
    llm_metric = EvaluationRunMetric.model_validate(
        {
            "metric": "helpful",
            "metricConfig": {"llmBasedMetricSpec": {"metricPromptTemplate": TEMPLATE}},
        }
    )
    assert _scores(result, "helpful", 0) == _ours(llm_metric, judges) == [5.0, 5.0, 2.0]
    assert _scores(result, "helpful", 1) == _ours(llm_metric, judges, other)
    quality = EvaluationRunMetric(metric="general_quality_v1")
    assert _scores(result, "general_quality_v1", 0) == _ours(quality, judges)
    case = result.eval_case_results[0].response_candidate_results[0]
    verdicts = case.metric_results["general_quality_v1"].rubric_verdicts
    assert [v.verdict for v in verdicts] == [True, True]
    # Win rates of the two candidates, computed by the SDK from the scores we returned.
    summary = {m.metric_name: m for m in result.summary_metrics}
    assert summary["helpful"].num_cases_valid == 6
    first, second = _ours(llm_metric, judges), _ours(llm_metric, judges, other)
    wins = [sum(a > b for a, b in zip(first, second, strict=True)), 0]
    wins[1] = sum(b > a for a, b in zip(first, second, strict=True))
    ties = sum(a == b for a, b in zip(first, second, strict=True))
    assert result.win_rates["helpful"] == {
        "win_rates": [wins[0] / 3, wins[1] / 3],
        "tie_rate": ties / 3,
    }


def test_a_per_metric_input_is_scored_as_a_run_scores_it(emulator: Emulator, project: str) -> None:
    calls = [{"toolName": "get_weather", "toolInput": json.dumps({"city": "Paris"})}]
    extra = [*calls, {"toolName": "book", "toolInput": "{}"}]
    body = {
        "trajectoryPrecisionInput": {
            "metricSpec": {},
            "instances": [
                {
                    "predictedTrajectory": {"toolCalls": extra},
                    "referenceTrajectory": {"toolCalls": calls},
                },
                {
                    "predicted_trajectory": {"tool_calls": calls},
                    "reference_trajectory": {"tool_calls": calls},
                },
            ],
        }
    }
    with emulator.client(project) as client:
        answer = client.evaluate_instances(body)
        values = answer.model_extra["trajectoryPrecisionResults"]["trajectoryPrecisionMetricValues"]
        assert values == [{"score": 0.5}, {"score": 1.0}]
        tools = {
            "toolNameMatchInput": {
                "instances": [
                    {
                        "prediction": json.dumps(
                            {"content": "", "tool_calls": [{"name": "a", "arguments": {}}]}
                        ),
                        "reference": json.dumps(
                            {"content": "", "tool_calls": [{"name": "b", "arguments": {}}]}
                        ),
                    }
                ]
            }
        }
        named = client.evaluate_instances(tools).model_extra["toolNameMatchResults"]
        assert named == {"toolNameMatchMetricValues": [{"score": 0.0}]}


def test_every_input_of_the_document_is_computed_or_unimplemented_naming_it(
    emulator: Emulator, project: str
) -> None:
    from discovery_documents import document

    for version, prefix in (
        ("v1beta1", "GoogleCloudAiplatformV1beta1"),
        ("v1", "GoogleCloudAiplatformV1"),
    ):
        request = document(version)["schemas"][f"{prefix}EvaluateInstancesRequest"]["properties"]
        inputs = {k for k in request if k.endswith("Input")}
        assert inputs == set(LEGACY_INPUTS) | set(UNIMPLEMENTED_INPUTS) | set(JUDGED_INPUTS)
    url = f"{emulator.url}/v1beta1/projects/{project}/locations/us-central1:evaluateInstances"
    for name in sorted(UNIMPLEMENTED_INPUTS):
        answer = httpx.post(url, json={name: {"instance": {}}})
        assert answer.status_code == 501, name
        assert answer.json()["error"]["message"].startswith(f"{name}: ")


def test_the_paths_the_sdk_and_the_document_use_all_reach_it(
    emulator: Emulator, project: str
) -> None:
    body = {"exactMatchInput": {"instances": [{"prediction": "a", "reference": "a"}]}}
    parent = f"projects/{project}/locations/us-central1"
    for path in (
        f"v1beta1/{parent}:evaluateInstances",
        f"v1/{parent}/:evaluateInstances",
        "v1beta1:evaluateInstances",
    ):
        answer = httpx.post(f"{emulator.url}/{path}", json=body)
        assert answer.json() == {
            "exactMatchResults": {"exactMatchMetricValues": [{"score": 1.0}]}
        }, path


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"exactMatchInput": {"instances": [{"predicton": "a"}]}},
            "exactMatchInput.instances[0].predicton: unknown field",
        ),
        ({"bleuInput": {"instances": []}}, "bleuInput.instances: expected a non-empty list"),
        ({"exactMatchInput": {}, "bleuInput": {}}, "one kind of input per request"),
        (
            {"metrics": [{"predefinedMetricSpec": {"metricSpecName": "exact_match"}}]},
            "instance: the instance to evaluate is required",
        ),
        ({"metricz": []}, "metricz: not a field of EvaluateInstancesRequest"),
        (
            {
                "metrics": [{"llmBasedMetricSpec": {"metricPromptTemplate": "{response}"}}],
                "instance": {"response": {"text": "x"}},
            },
            "a judge model scores it, and none is configured",
        ),
    ],
)
def test_a_bad_request_is_invalid_argument_naming_the_field(
    body: dict[str, Any], message: str, sync_client: Any
) -> None:
    with pytest.raises(errors.InvalidArgument) as raised:
        sync_client.evaluate_instances(body)
    assert message in str(raised.value)


@pytest.mark.anyio
async def test_the_async_client_scores_a_registered_metric_by_name(
    judged: tuple[Emulator, Any], project: str
) -> None:
    emulator, _ = judged
    async with emulator.async_client(project) as client:
        registered = await client.create_metric(
            {
                "displayName": "helpful",
                "metric": {"llmBasedMetricSpec": {"metricPromptTemplate": TEMPLATE}},
            }
        )
        answer = await client.evaluate_instances(
            {
                "metricSources": [{"metricResourceName": registered.name}],
                "instance": {
                    "prompt": {"text": "Capital of France?"},
                    "response": {"text": "Paris"},
                },
            }
        )
    (result,) = answer.metric_results or []
    assert (result.score, result.explanation) == (5.0, "judged 5")


def test_a_pairwise_input_is_decided_by_the_judge(project: str) -> None:
    body = {
        "pairwiseMetricInput": {
            "metricSpec": {
                "metricPromptTemplate": "Which is better for {prompt}: {response} or {baseline_model_response}?"
            },
            "instance": {
                "jsonInstance": json.dumps(
                    {
                        "prompt": "Capital of France?",
                        "response": "Paris",
                        "baseline_model_response": "Lyon",
                    }
                )
            },
        }
    }
    choice = json.dumps({"pairwise_choice": "CANDIDATE", "explanation": "Paris is right"})
    with model_judges(lambda seen: choice) as (judges, fake), Emulator(judges=judges) as own:
        with own.client(project) as client:
            answer = client.evaluate_instances(body).model_extra["pairwiseMetricResult"]
        assert answer == {"pairwiseChoice": "CANDIDATE", "explanation": "Paris is right"}
        assert fake.seen[0].prompt.startswith(
            "Which is better for Capital of France?: Paris or Lyon?"
        )
    with (
        Emulator() as plain,
        plain.client(project) as client,
        pytest.raises(errors.InvalidArgument, match="a judge model decides it"),
    ):
        client.evaluate_instances(body)


def test_a_custom_code_metric_runs_only_where_allowed(project: str) -> None:
    body = {
        "metrics": [
            {
                "customCodeExecutionSpec": {
                    "evaluationFunction": "def evaluate(instance):\n    return len(instance['response']['text']) / 10\n"
                }
            }
        ],
        "instance": {"prompt": {"text": "hi"}, "response": {"text": "hello"}},
    }
    with Emulator(allow_code_metrics=True) as allowed, allowed.client(project) as client:
        (result,) = client.evaluate_instances(body).metric_results or []
        assert result.score == 0.5
    with (
        Emulator() as refused,
        refused.client(project) as client,
        pytest.raises(errors.InvalidArgument, match="--allow-code-metrics"),
    ):
        client.evaluate_instances(body)


def test_a_metric_source_is_looked_up_as_a_run_looks_it_up(sync_client: Any) -> None:
    """evaluateInstances and a run read a registered metric through the same lookup: another
    project's metric is refused naming the project, a missing one is NOT_FOUND (a run's
    configuration naming it is INVALID_ARGUMENT), a name that is no metric's is refused."""
    registered = sync_client.create_metric(
        {"displayName": "m", "metric": {"llmBasedMetricSpec": {"metricPromptTemplate": TEMPLATE}}}
    )
    instance = {"prompt": {"text": "q"}, "response": {"text": "a"}}

    def evaluate(name: str) -> Any:
        return sync_client.evaluate_instances(
            {"metricSources": [{"metricResourceName": name}], "instance": instance}
        )

    elsewhere = registered.name.replace(sync_client.project, "someone-else", 1)
    with pytest.raises(errors.InvalidArgument, match="belongs to another project or location"):
        evaluate(elsewhere)
    missing = registered.name.rsplit("/", 1)[0] + "/404"
    with pytest.raises(
        errors.NotFound, match=r"metricSources\[\]\.metricResourceName: .* not found"
    ):
        evaluate(missing)
    with pytest.raises(errors.InvalidArgument, match="is not an EvaluationMetric's name"):
        evaluate("projects/p/locations/us-central1/evaluationSets/1")
    item = sync_client.create_item(request_item("x", candidates=[{"candidate": "a", "text": "hi"}]))
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    with pytest.raises(errors.InvalidArgument, match="belongs to another project or location"):
        sync_client.create_run(
            evaluation_set=evaluation_set,
            metrics=[{"metric": "m", "metricResourceName": elsewhere}],
        )


@pytest.mark.slow  # an SDK and judged rows: CI runs it (.ci/run)
def test_the_sdks_final_response_match_reads_the_reference_column(project: str) -> None:
    """`RubricMetric.FINAL_RESPONSE_MATCH` (final_response_match_v2, ADK's evaluator) on a
    dataset of prompt, response and reference: each row is judged, the judge given the
    response and the reference as the expected answer, not refused for want of a golden
    conversation."""
    pytest.importorskip("google.adk.evaluation.final_response_match_v2")
    from agentplatform import types as vt
    from fake_gemini import adk_judge_rule

    with model_judges(adk_judge_rule) as (judges, fake), Emulator(judges=judges) as emulator:
        result = _official(emulator.url, project).evals.evaluate(
            dataset=_dataset(), metrics=[vt.RubricMetric.FINAL_RESPONSE_MATCH]
        )
    assert _errors(result) == []
    assert all(score in (0.0, 1.0) for score in _scores(result, "final_response_match_v2"))
    for _, response, reference in ROWS:
        assert any(response in s.prompt and reference in s.prompt for s in fake.seen), reference
