"""v1 serves exactly the v1 document: a field only v1beta1 has is refused in a v1 request and
left out of a v1 answer; evaluationExperiments is v1beta1's alone. The emulator's table of
those fields is the documents' own difference, checked here."""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
import pytest
from factories import request_item

from platform_eval import types as t
from platform_eval.emulator import Emulator
from platform_eval.emulator.versions import V1BETA1_ONLY_FIELDS

#: Discovery schema (without its version prefix) -> our model, for the schemas that differ.
OURS = {
    "CandidateResponse": t.CandidateResponse,
    "CustomCodeExecutionSpec": t.CustomCodeExecutionSpec,
    "EvaluationParserConfigCustomCodeParserConfig": t.CustomCodeParserConfig,
    "EvaluationItem": t.EvaluationItem,
    "EvaluationResult": t.EvaluationResult,
    "EvaluationResults": t.EvaluationRunResults,
    "EvaluationRun": t.EvaluationRun,
    "EvaluationRunDataSource": t.EvaluationRunDataSource,
    "EvaluationRunInferenceConfig": t.InferenceConfig,
    "EvaluationRunInferenceConfigAgentRunConfig": t.AgentRunConfig,
    "EvaluationRunMetricPredefinedMetricSpec": t.RunPredefinedMetricSpec,
    "EvaluationSet": t.EvaluationSet,
    "GenerationConfig": t.GenerationConfig,
    "Metric": t.MetricConfig,
    "PredefinedMetricSpec": t.PredefinedMetricSpec,
}
#: Schemas that differ whose models are google-genai's (Part, retrieval tools): genai's own.
GENAI = {"Part", "RagRetrievalConfig", "VertexRagStore"}


def _schemas(version: str) -> dict[str, Any]:
    discovery = pytest.importorskip("googleapiclient")
    path = os.path.join(
        os.path.dirname(discovery.__file__), f"discovery_cache/documents/aiplatform.{version}.json"
    )
    with open(path) as handle:
        schemas = json.load(handle)["schemas"]
    prefix = {"v1beta1": "GoogleCloudAiplatformV1beta1", "v1": "GoogleCloudAiplatformV1"}[version]
    return {name.removeprefix(prefix): body for name, body in schemas.items()}


def test_the_table_is_the_difference_of_the_two_documents() -> None:
    beta, one = _schemas("v1beta1"), _schemas("v1")
    expected: dict[str, set[str]] = {}
    for name, model in OURS.items():
        only = set(beta[name]["properties"]) - set(one[name]["properties"])
        assert only, name
        by_wire = {field.alias or key: key for key, field in model.model_fields.items()}
        expected[model.__name__] = {by_wire[wire] for wire in only}
    assert {k: set(v) for k, v in V1BETA1_ONLY_FIELDS.items()} == expected
    # Every schema the evaluation resources reach that differs is in the table, or is
    # google-genai's (its models are google-genai's own).
    reachable: set[str] = set()
    pending = [name for name in beta if name.startswith("Evaluation")]
    while pending:
        name = pending.pop()
        if name in reachable or name not in beta:
            continue
        reachable.add(name)
        for prop in beta[name].get("properties", {}).values():
            for ref in (prop, prop.get("items") or {}, prop.get("additionalProperties") or {}):
                if "$ref" in ref:
                    pending.append(ref["$ref"].removeprefix("GoogleCloudAiplatformV1beta1"))
    differing = {
        name
        for name in reachable
        if name in one
        and set(beta[name].get("properties", {})) - set(one[name].get("properties", {}))
    }
    assert differing == set(OURS) | GENAI


def _set(client: Any) -> str:
    item = client.create_item(request_item("x", candidates=[{"candidate": "a", "text": "hello"}]))
    return str(client.create_set(display_name="s", items=[item]).name)


def test_a_v1_request_with_a_v1beta1_field_is_refused_naming_it(
    sync_client: Any, emulator: Emulator
) -> None:
    experiment = sync_client.create_experiment({"displayName": "e"})
    body = {
        "displayName": "r",
        "dataSource": {"evaluationSet": _set(sync_client)},
        "evaluationConfig": {"metrics": [{"metric": "exact_match"}]},
        "evaluationExperiment": experiment.name,
    }
    v1 = f"{emulator.url}/v1/{sync_client.parent}/evaluationRuns"
    refused = httpx.post(v1, json=body)
    assert refused.status_code == 400
    assert refused.json()["error"]["message"].startswith(
        "evaluationExperiment: not a field of the v1 API"
    )
    nested = {
        "displayName": "y",
        "evaluationItemType": "REQUEST",
        "evaluationRequest": {
            "prompt": {"text": "q"},
            "candidateResponses": [
                {"candidate": "a", "events": [{"role": "model", "parts": [{"text": "x"}]}]}
            ],
        },
    }
    refused = httpx.post(f"{emulator.url}/v1/{sync_client.parent}/evaluationItems", json=nested)
    assert refused.status_code == 400
    assert "evaluationRequest.candidateResponses[0].events" in refused.json()["error"]["message"]
    created = httpx.post(f"{emulator.url}/v1beta1/{sync_client.parent}/evaluationRuns", json=body)
    assert created.status_code == 200


def test_a_v1_answer_leaves_out_what_only_v1beta1_has(sync_client: Any, emulator: Emulator) -> None:
    experiment = sync_client.create_experiment({"displayName": "e"})
    run = sync_client.create_run(
        {
            "dataSource": {"evaluationSet": _set(sync_client)},
            "evaluationConfig": {"metrics": [{"metric": "exact_match"}]},
            "evaluationExperiment": experiment.name,
        }
    )
    # Done first: a run moving on between the reads below would differ for that reason alone.
    sync_client.wait_for_run(run, poll_interval=0.02, timeout=30)
    beta = httpx.get(f"{emulator.url}/v1beta1/{run.name}").json()
    one = httpx.get(f"{emulator.url}/v1/{run.name}").json()
    assert beta["evaluationExperiment"] == experiment.name
    assert "evaluationExperiment" not in one and one["name"] == run.name
    listed = httpx.get(f"{emulator.url}/v1/{sync_client.parent}/evaluationRuns").json()
    assert all("evaluationExperiment" not in r for r in listed["evaluationRuns"])
    # The stored resource is untouched: v1beta1 still has it.
    assert httpx.get(f"{emulator.url}/v1beta1/{run.name}").json() == beta


def test_experiments_are_not_served_on_v1(sync_client: Any, emulator: Emulator) -> None:
    answer = httpx.post(
        f"{emulator.url}/v1/{sync_client.parent}/evaluationExperiments", json={"displayName": "x"}
    )
    assert answer.status_code == 404
    assert "not part of the v1 API" in answer.json()["error"]["message"]


def test_every_v1beta1_only_field_a_resource_can_hold_is_left_out_on_v1(
    sync_client: Any, emulator: Emulator
) -> None:
    # The golden response's events: a place the hand-written table of paths had missed.
    events = [{"role": "model", "parts": [{"text": "x"}]}]
    item = {
        "displayName": "y",
        "evaluationItemType": "REQUEST",
        "evaluationRequest": {
            "prompt": {"text": "q"},
            "goldenResponse": {"text": "a", "events": events},
            "candidateResponses": [{"candidate": "a", "text": "a", "events": events}],
        },
    }
    beta = f"{emulator.url}/v1beta1/{sync_client.parent}/evaluationItems"
    name = httpx.post(beta, json=item).json()["name"]
    one = httpx.get(f"{emulator.url}/v1/{name}").json()["evaluationRequest"]
    assert one["goldenResponse"] == {"text": "a"}
    assert one["candidateResponses"] == [{"candidate": "a", "text": "a"}]
    stored = httpx.get(f"{emulator.url}/v1beta1/{name}").json()
    assert stored["evaluationRequest"] == item["evaluationRequest"]
