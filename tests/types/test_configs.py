"""The nested configurations of runs and metrics are typed from the discovery documents.

Generation, judge, inference, loss analysis and metric specs: read in either proto spelling,
served as the service spells them, and a misspelled key refused with the field named, by the
client before it sends and by the emulator when a request bypasses the client.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import httpx
import pytest
from factories import request_item

from platform_eval import types as t
from platform_eval.emulator import Emulator

# Proto (snake_case) names, as Google's own client writes these configs.
GENERATION = {
    "temperature": 0.2,
    "max_output_tokens": 256,
    "model_config": {"feature_selection_preference": "BALANCED"},
    "thinking_config": {"thinking_budget": 128, "include_thoughts": True},
    "response_mime_type": "application/json",
    "response_schema": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}},
    "response_format": [{"text": {"mime_type": "APPLICATION_JSON", "schema": {"type": "object"}}}],
}
GENERATION_SERVED = {
    "temperature": 0.2,
    "maxOutputTokens": 256,
    "modelConfig": {"featureSelectionPreference": "BALANCED"},
    "thinkingConfig": {"thinkingBudget": 128, "includeThoughts": True},
    "responseMimeType": "application/json",
    "responseSchema": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}},
    "responseFormat": [{"text": {"mimeType": "APPLICATION_JSON", "schema": {"type": "object"}}}],
}


def _run_body(evaluation_set: str) -> dict[str, Any]:
    return copy.deepcopy(_RUN_BODY) | {"dataSource": {"evaluationSet": evaluation_set}}


_RUN_BODY: dict[str, Any] = {
    "displayName": "configs",
    "evaluationConfig": {
        "metrics": [{"metric": "exact_match"}],
        "autoraterConfig": {"autorater_model": "gemini-judge", "generation_config": GENERATION},
        "loss_analysis_config": [{"metric": "exact_match", "candidate": "agent"}],
    },
    "inference_configs": {
        # What the official SDK sends with agent_info: the agents' static configs, no inference.
        "agent": {
            "generation_config": GENERATION,
            "agents": {"weather": {"agent_id": "weather", "instruction": "Be brief."}},
            "parallelism": 2,
        }
    },
}


def _served(emulator: Emulator, name: str) -> dict[str, Any]:
    response = httpx.get(f"{emulator.url}/v1beta1/{name}")
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    return body


def test_run_configs_in_proto_names_are_served_as_the_service_spells_them(
    client: Any, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run with a lossAnalysisConfig needs a judge model to cluster its failures; this one has
    # none to cluster (exact_match writes no rubric verdicts), so none is asked.
    monkeypatch.setattr(emulator.backend, "has_judge_model", True)
    item = client.create_item(request_item("x"))
    evaluation_set = client.create_set(display_name="s", items=[item])
    run = client.create_run(_run_body(evaluation_set.name))

    served = _served(emulator, run.name)
    config = served["evaluationConfig"]
    assert config["autoraterConfig"]["generationConfig"] == GENERATION_SERVED
    assert config["lossAnalysisConfig"] == [{"metric": "exact_match", "candidate": "agent"}]
    agent = served["inferenceConfigs"]["agent"]
    assert agent["generationConfig"] == GENERATION_SERVED
    assert agent["agents"] == {"weather": {"agentId": "weather", "instruction": "Be brief."}}

    # And typed in Python: a reserved proto name takes a trailing underscore.
    read = client.get_run(run)
    generation = read.inference_configs["agent"].generation_config
    assert isinstance(generation, t.GenerationConfig)
    assert generation.model_config_.feature_selection_preference == "BALANCED"
    assert generation.response_schema.properties["city"].type == "STRING"
    assert generation.response_format[0].text.schema_ == {"type": "object"}
    assert read.evaluation_config.autorater_config.generation_config == generation


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"model": "gemini-2.5-flash"}, "model"),
        ({"agent_config": {"tools": []}}, "agentConfig"),
        (
            {
                "agent_run_config": {
                    "session_input": {"user_id": "u1", "session_state": {"Mixed_Key": 1}},
                    "user_simulator_config": {"model_name": "gemini-sim", "max_turn": 4},
                }
            },
            "agentRunConfig",
        ),
    ],
)
def test_a_run_that_needs_inference_is_unimplemented_naming_the_field(
    client: Any, emulator: Emulator, config: dict[str, Any], field: str
) -> None:
    """The emulator does not produce responses: 501, never a run that evaluates nothing."""
    item = client.create_item(request_item("x"))
    evaluation_set = client.create_set(display_name="s", items=[item])
    body = _run_body(evaluation_set.name) | {"inference_configs": {"my agent": config}}
    response = httpx.post(f"{emulator.url}/v1beta1/{client.parent}/evaluationRuns", json=body)
    assert response.status_code == 501
    error = response.json()["error"]
    assert error["status"] == "UNIMPLEMENTED"
    assert error["message"].startswith(f'inferenceConfigs["my agent"].{field}: the emulator')


@pytest.mark.parametrize(
    ("path", "typo", "message"),
    [
        (
            ("evaluationConfig", "autoraterConfig", "generation_config"),
            "temprature",
            "unknown field 'temprature' for GenerationConfig (did you mean 'temperature'?)",
        ),
        (
            ("inference_configs", "agent", "agent_run_config"),
            "sesion_input",
            "unknown field 'sesion_input' for AgentRunConfig (did you mean 'session_input'?)",
        ),
    ],
)
def test_a_misspelled_config_key_is_refused_naming_the_field(
    sync_client: Any, emulator: Emulator, path: tuple[str, ...], typo: str, message: str
) -> None:
    item = sync_client.create_item(request_item("x"))
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    body = _run_body(evaluation_set.name)
    node = body
    for key in path:
        node = node.setdefault(key, {})
    node[typo] = 1

    with pytest.raises(ValueError, match=re.escape(message)):
        sync_client.create_run(body)
    # The emulator, sent the body directly, refuses it as the service would (400, the field).
    response = httpx.post(f"{emulator.url}/v1beta1/{sync_client.parent}/evaluationRuns", json=body)
    assert response.status_code == 400
    assert typo in response.json()["error"]["message"]


def test_a_registered_metrics_specs_are_typed(sync_client: Any) -> None:
    created = sync_client.create_metric(
        {
            "displayName": "grounded",
            "metric": {
                "llm_based_metric_spec": {
                    "metric_prompt_template": "Is {response} grounded?",
                    "rubric_generation_spec": {
                        "model_config": {"autorater_model": "gemini-rubrics", "sampling_count": 2},
                        "rubric_content_type": "NL_QUESTION_ANSWER",
                    },
                    "result_parser_config": {
                        "custom_code_parser_config": {"parsing_function": "def parse(r): ..."}
                    },
                },
                "metadata": {"title": "Grounded", "score_range": {"min": 0, "max": 5, "step": 1}},
            },
        }
    )
    metric = sync_client.get_metric(created).metric
    spec = metric.llm_based_metric_spec
    assert spec.rubric_generation_spec.model_config_.sampling_count == 2
    assert spec.result_parser_config.custom_code_parser_config.parsing_function.startswith("def")
    assert metric.metadata.score_range.max == 5.0
    assert metric.to_wire()["llmBasedMetricSpec"]["rubricGenerationSpec"] == {
        "modelConfig": {"autoraterModel": "gemini-rubrics", "samplingCount": 2},
        "rubricContentType": "NL_QUESTION_ANSWER",
    }


def test_a_step_based_metric_is_typed_to_its_steps() -> None:
    spec = t.MetricConfig.model_validate(
        {
            "step_based_llm_metric_spec": {
                "preprocessor": {
                    "filter_config": {"trace_compression_config": {"max_turn_count": 5}}
                },
                "steps": [
                    {
                        "step_id": "plan",
                        "prompt_template": "Was the plan sound? {response}",
                        "autorater_config": {"sampling_count": 3, "flip_enabled": True},
                    }
                ],
            }
        }
    ).step_based_llm_metric_spec
    (step,) = spec.steps
    assert step.autorater_config.flip_enabled is True
    assert spec.preprocessor.to_wire() == {
        "filterConfig": {"traceCompressionConfig": {"maxTurnCount": 5}}
    }
    with pytest.raises(ValueError, match="codeConfig and filterConfig"):
        t.AgentDataPreprocessor(code_config={"code": "x"}, filter_config={})


def test_oneofs_of_the_specs_are_enforced() -> None:
    with pytest.raises(ValueError, match="rubricGroupKey and rubricGenerationSpec"):
        t.LLMBasedMetricSpec(
            metric_prompt_template="x", rubric_group_key="g", rubric_generation_spec={}
        )
    with pytest.raises(ValueError, match="promptTemplate and gcsUri"):
        t.EvaluationRun.model_validate(
            {"inferenceConfigs": {"a": {"promptTemplate": {"promptTemplate": "x", "gcsUri": "y"}}}}
        )
    # What a server sends is read leniently.
    served = t.LLMBasedMetricSpec.from_wire({"rubricGroupKey": "g", "rubricGenerationSpec": {}})
    assert served.rubric_group_key == "g"
