"""Custom LLM metrics: the template filled per candidate, scored by a judge model.

The judge is the one the product builds (Judges with a Judging model judge on google-genai);
its model is a fake Gemini server on loopback, since no Gemini model is reachable here.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from factories import request_item
from fake_gemini import model_judges
from google.genai import types as genai_types

from platform_eval import errors, metrics
from platform_eval._transport import ApiCall
from platform_eval.emulator import Emulator
from platform_eval.types import EvaluationRequest, EvaluationRunMetric

TEMPLATE = "Is the answer {response} to {prompt} as good as {reference}? Score 1 to 5."
REQUEST = {
    "prompt": {"text": "Weather in Paris?"},
    "goldenResponse": {"text": "Sunny, 24 C."},
    "candidateResponses": [{"candidate": "agent", "text": "It is sunny."}],
}


SCORED = '{"score": 4, "explanation": "Right, but no temperature."}'


def _llm_metric(**spec: Any) -> EvaluationRunMetric:
    return EvaluationRunMetric.model_validate(
        {"metric": "faithful", "metricConfig": {"llmBasedMetricSpec": spec}}
    )


@pytest.mark.parametrize("key", ["metricPromptTemplate", "metric_prompt_template"])
def test_the_template_is_filled_and_the_judge_scores_it(key: str) -> None:
    spec = metrics.resolve(_llm_metric(**{key: TEMPLATE, "systemInstruction": "Be strict."}))
    assert spec.name == "faithful" and spec.scorer is not None
    request = EvaluationRequest.model_validate(REQUEST)
    with model_judges(lambda seen: SCORED) as (judges, fake):
        (result,) = metrics.evaluate_request([spec], request, judges)
    assert (result.candidate, result.metric, result.score) == ("agent", "faithful", 4.0)
    assert result.explanation == "Right, but no temperature."
    (call,) = fake.seen
    assert call.prompt.startswith(
        "Is the answer It is sunny. to Weather in Paris? as good as Sunny, 24 C.? Score 1 to 5."
    )
    assert call.body["systemInstruction"]["parts"][0]["text"] == "Be strict."
    assert call.body["generationConfig"]["responseMimeType"] == "application/json"


def test_the_older_pointwise_spec_and_a_prompt_value_fill_it_too() -> None:
    metric = EvaluationRunMetric.model_validate(
        {
            "metric": "on_topic",
            "metricConfig": {
                "pointwiseMetricSpec": {"metricPromptTemplate": "{topic}: {response}"}
            },
        }
    )
    request = EvaluationRequest.model_validate(
        {"prompt": {"value": {"topic": "weather"}}, "candidateResponses": [{"text": "sunny"}]}
    )
    with model_judges(lambda seen: SCORED) as (judges, fake):
        metrics.evaluate_request([metrics.resolve(metric)], request, judges)
    assert fake.seen[0].prompt.startswith("weather: sunny")


def test_a_placeholder_the_request_lacks_is_not_evaluated_with_the_reason() -> None:
    spec = metrics.resolve(_llm_metric(metricPromptTemplate="{response} given {context}"))
    request = EvaluationRequest.model_validate(REQUEST)
    with model_judges(lambda seen: SCORED) as (judges, fake):
        (result,) = metrics.evaluate_request([spec], request, judges)
    assert not fake.seen
    assert result.score is None
    assert "{context}" in (result.explanation or "")
    assert "it has prompt, reference, response" in (result.explanation or "")


def test_without_a_judge_model_it_is_not_evaluated_never_guessed() -> None:
    spec = metrics.resolve(_llm_metric(metricPromptTemplate=TEMPLATE))
    request = EvaluationRequest.model_validate(REQUEST)
    (result,) = metrics.evaluate_request([spec], request, metrics.Judges())
    assert result.score is None
    assert "needs a judge model" in (result.explanation or "")
    assert "PLATFORM_EVAL_JUDGE_MODEL" in (result.explanation or "")


@pytest.mark.parametrize(
    ("answer", "problem"),
    [("not json", "JSONDecodeError"), ('{"score": "NaN", "explanation": ""}', "not a number")],
)
def test_a_judge_answer_that_is_not_a_score_is_not_evaluated(answer: str, problem: str) -> None:
    spec = metrics.resolve(_llm_metric(metricPromptTemplate=TEMPLATE))
    request = EvaluationRequest.model_validate(REQUEST)
    with model_judges(lambda seen: answer) as (judges, _):
        (result,) = metrics.evaluate_request([spec], request, judges)
    assert result.score is None and problem in (result.explanation or "")


def test_a_custom_metrics_own_judge_model_is_the_one_asked() -> None:
    spec = metrics.resolve(
        _llm_metric(
            metricPromptTemplate=TEMPLATE,
            judgeAutoraterConfig={"autoraterModel": "gemini-2.5-pro"},
        )
    )
    with model_judges(lambda seen: SCORED, model="gemini-2.5-flash") as (judges, fake):
        metrics.evaluate_request([spec], EvaluationRequest.model_validate(REQUEST), judges)
    assert [seen.model for seen in fake.seen] == ["gemini-2.5-pro"]


def test_a_custom_llm_metric_needs_a_name_and_custom_code_is_refused() -> None:
    with pytest.raises(metrics.MetricError, match="needs its name"):
        metrics.resolve(
            EvaluationRunMetric.model_validate(
                {"metricConfig": {"llmBasedMetricSpec": {"metricPromptTemplate": "x"}}}
            )
        )
    code = {
        "metric": "mine",
        "metricConfig": {
            "customCodeExecutionSpec": {"evaluationFunction": "def evaluate(i): return 1.0"}
        },
    }
    spec = metrics.resolve(EvaluationRunMetric.model_validate(code))
    # The engine runs it only through a code runner: the local judge alone has none.
    (result,) = metrics.evaluate_request([spec], EvaluationRequest.model_validate(REQUEST))
    assert result.score is None and "--allow-code-metrics" in (result.explanation or "")
    code["metricConfig"]["customCodeExecutionSpec"]["evaluationFunction"] = "x = 1"
    with pytest.raises(metrics.MetricError, match="must define evaluate"):
        metrics.resolve(EvaluationRunMetric.model_validate(code))


@pytest.fixture
def judged_emulator() -> Iterator[Emulator]:
    with model_judges(lambda seen: SCORED) as (judges, _), Emulator(judges=judges) as emulator:
        yield emulator


def test_the_emulator_scores_inline_and_registered_llm_metrics(judged_emulator: Emulator) -> None:
    with judged_emulator.client("p") as client:
        item = client.create_item({**request_item("weather"), "evaluationRequest": REQUEST})
        evaluation_set = client.create_set(display_name="s", items=[item])
        registered = client.create_metric(
            {
                "displayName": "faithful_registered",
                "metric": {"llmBasedMetricSpec": {"metricPromptTemplate": TEMPLATE}},
            }
        )
        run = client.create_run(
            evaluation_set=evaluation_set,
            metrics=[
                _llm_metric(metricPromptTemplate=TEMPLATE),
                {"metric": "faithful_registered", "metricResourceName": registered.name},
                "exact_match",
            ],
        )
        done = client.wait_for_run(run, poll_interval=0.05, timeout=30)
        assert done.state == "SUCCEEDED"
        (result,) = client.get_results(done)
        scores = {r.metric: r.score for r in result.evaluation_response.candidate_results}
        assert scores == {"faithful": 4.0, "faithful_registered": 4.0, "exact_match": 0.0}
        assert done.summary["agent/faithful/AVERAGE"] == 4.0


def test_a_run_with_a_custom_code_metric_is_refused_with_the_reason(sync_client: Any) -> None:
    item = sync_client.create_item(request_item("x"))
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    code = {
        "metric": "mine",
        "metricConfig": {
            "customCodeExecutionSpec": {"evaluationFunction": "def evaluate(i): return 1.0"}
        },
    }
    with pytest.raises(errors.InvalidArgument, match="only when started with --allow-code-metrics"):
        sync_client.create_run(evaluation_set=evaluation_set, metrics=[code])


@pytest.mark.slow
def test_the_official_clients_llm_metric_runs_on_the_emulator(
    judged_emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from test_official_client import official_evals
        from vertexai import types as vt

    monkeypatch.setenv("STORAGE_EMULATOR_HOST", judged_emulator.url)
    with judged_emulator.client("official-llm") as ours:
        item = ours.create_item({**request_item("weather"), "evaluationRequest": REQUEST})
        evaluation_set = ours.create_set(display_name="s", items=[item])
    official = official_evals("vertexai", "official-llm", judged_emulator.url)
    run = official.create_evaluation_run(
        dataset=vt.EvaluationRunDataSource(evaluation_set=evaluation_set.name),
        dest="gs://official-llm-results/out",
        metrics=[
            vt.LLMMetric(
                name="faithful",
                prompt_template=TEMPLATE,
                judge_model="gemini-judge",
                judge_model_generation_config=genai_types.GenerationConfig(
                    temperature=0.0, max_output_tokens=64
                ),
                judge_model_system_instruction="You grade weather answers.",
            )
        ],
    )
    with judged_emulator.client("official-llm") as ours:
        done = ours.wait_for_run(run.name, poll_interval=0.05, timeout=30)
        assert done.state == "SUCCEEDED", done.error
        # Sent in proto (snake_case) names, typed on arrival, served as the service spells it.
        served = ours._transport.request(ApiCall("GET", run.name))
        (metric,) = served["evaluationConfig"]["metrics"]
        assert metric["metricConfig"]["llmBasedMetricSpec"] == {
            "metricPromptTemplate": TEMPLATE,
            "systemInstruction": "You grade weather answers.",
            "judgeAutoraterConfig": {
                "autoraterModel": "gemini-judge",
                "generationConfig": {"temperature": 0.0, "maxOutputTokens": 64},
            },
        }
        (result,) = ours.get_results(done)
        (scored,) = result.evaluation_response.candidate_results
        assert (scored.metric, scored.score) == ("faithful", 4.0)
        assert done.summary["agent/faithful/AVERAGE"] == 4.0
