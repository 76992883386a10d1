"""Fields the discovery document marks "Required." are required: the emulator's table is the
document's own list (computed here), and a request leaving one out, however deep, is refused
naming its path."""

from __future__ import annotations

import json
import os
import types as pytypes
import typing
from typing import Any

import httpx
import pytest
from factories import request_item

from platform_eval import Client
from platform_eval import types as t
from platform_eval.emulator import Emulator
from platform_eval.emulator.required import LENIENT, REQUIRED
from platform_eval.types import WireModel

PREFIX = "GoogleCloudAiplatformV1beta1"
TOP = (
    "EvaluationItem",
    "EvaluationSet",
    "EvaluationRun",
    "EvaluationMetric",
    "EvaluationExperiment",
)


def _models_in(annotation: Any) -> typing.Iterator[type[WireModel]]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        yield from _models_in(typing.get_args(annotation)[0])
    elif origin is typing.Union or origin is pytypes.UnionType:
        for arg in typing.get_args(annotation):
            yield from _models_in(arg)
    elif origin in (list, dict):
        yield from _models_in(typing.get_args(annotation)[-1])
    elif isinstance(annotation, type) and issubclass(annotation, WireModel):
        yield annotation


def _documented_required() -> dict[str, set[str]]:
    """Our model -> the fields its schema marks required, walking the document and our
    models side by side from the five resources."""
    discovery = pytest.importorskip("googleapiclient")
    path = os.path.join(
        os.path.dirname(discovery.__file__), "discovery_cache/documents/aiplatform.v1beta1.json"
    )
    with open(path) as handle:
        schemas = json.load(handle)["schemas"]
    found: dict[str, set[str]] = {}
    seen: set[tuple[str, type]] = set()
    pending: list[tuple[str, type[WireModel]]] = [(PREFIX + n, getattr(t, n)) for n in TOP]
    while pending:
        schema, model = pending.pop()
        if (schema, model) in seen:
            continue
        seen.add((schema, model))
        ours = {field.alias or name: name for name, field in model.model_fields.items()}
        for wire, prop in schemas[schema].get("properties", {}).items():
            assert wire in ours, f"{model.__name__} has no field {wire}"
            if prop.get("description", "").startswith("Required") and not prop.get("readOnly"):
                found.setdefault(model.__name__, set()).add(ours[wire])
            ref = (
                prop.get("$ref")
                or (prop.get("items") or {}).get("$ref")
                or (prop.get("additionalProperties") or {}).get("$ref")
            )
            if ref:
                annotation = model.model_fields[ours[wire]].annotation
                pending += [(ref, inner) for inner in _models_in(annotation)]
    return found


def test_the_table_is_the_documents_required_fields_less_the_lenient_ones() -> None:
    expected = _documented_required()
    for model, fields in LENIENT.items():
        assert set(fields) <= expected[model], model  # still marked, or drop the exception
        expected[model] -= set(fields)
    assert {k: set(v) for k, v in REQUIRED.items()} == {k: v for k, v in expected.items() if v}


def _refused(answer: httpx.Response, path: str) -> None:
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["message"] == f"{path} is required"


@pytest.fixture
def base(emulator: Emulator, sync_client: Client) -> str:
    return f"{emulator.url}/v1beta1/{sync_client.parent}"


def _item_with(**request: Any) -> dict[str, Any]:
    item = request_item("x")
    item["evaluationRequest"].update(request)
    return item


@pytest.mark.parametrize(
    ("collection", "body", "path"),
    [
        ("evaluationItems", {**request_item("x"), "displayName": ""}, "displayName"),
        (
            "evaluationItems",
            _item_with(
                candidateResponses=[
                    {
                        "candidate": "a",
                        "agentData": {"turns": [{"turnIndex": 0, "events": [{"content": {}}]}]},
                    }
                ]
            ),
            "evaluationRequest.candidateResponses[0].agentData.turns[0].events[0].author",
        ),
        (
            "evaluationItems",
            _item_with(
                candidateResponses=[{"candidate": "a", "agentData": {"turns": [{"events": []}]}}]
            ),
            "evaluationRequest.candidateResponses[0].agentData.turns[0].turnIndex",
        ),
        (
            "evaluationItems",
            _item_with(rubrics={"g": {"rubrics": [{"type": "x"}]}}),
            "evaluationRequest.rubrics['g'].rubrics[0].content",
        ),
        ("evaluationSets", {"displayName": "s"}, "evaluationItems"),
        (
            "evaluationMetrics",
            {"displayName": "m", "metric": {"llmBasedMetricSpec": {"rubricGroupKey": "g"}}},
            "metric.llmBasedMetricSpec.metricPromptTemplate",
        ),
    ],
)
def test_a_create_leaving_out_a_required_field_is_refused_naming_it(
    base: str, collection: str, body: dict[str, Any], path: str
) -> None:
    _refused(httpx.post(f"{base}/{collection}", json=body), path)


def test_a_run_metric_needs_its_name(base: str, sync_client: Client) -> None:
    item = sync_client.create_item(request_item("x"))
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    body = {
        "displayName": "r",
        "dataSource": {"evaluationSet": evaluation_set.name},
        "evaluationConfig": {"metrics": [{"computationBasedMetricSpec": {"type": "EXACT_MATCH"}}]},
    }
    _refused(httpx.post(f"{base}/evaluationRuns", json=body), "evaluationConfig.metrics[0].metric")


def test_a_patch_may_leave_fields_out_but_not_clear_a_required_one(
    emulator: Emulator, sync_client: Client
) -> None:
    item = sync_client.create_item(request_item("x"))
    created = sync_client.create_set(display_name="s", items=[item])
    url = f"{emulator.url}/v1beta1/{created.name}"
    renamed = httpx.patch(url, json={"displayName": "t"}, params={"updateMask": "displayName"})
    assert renamed.status_code == 200 and renamed.json()["evaluationItems"] == [item.name]
    cleared = httpx.patch(url, json={}, params={"updateMask": "evaluationItems"})
    _refused(cleared, "evaluationItems")


def test_an_experiment_is_created_before_its_runs(base: str) -> None:
    # Marked required, yet the official client creates an experiment with no runs.
    created = httpx.post(f"{base}/evaluationExperiments", json={"displayName": "e"})
    assert created.status_code == 200
