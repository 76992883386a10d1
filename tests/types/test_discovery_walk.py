"""Every field of both discovery documents, on the five evaluation resources and everything they
reach, is a field of our models: a walk generated from the documents themselves, following each
``$ref`` into the model our field holds (issue 51, item 23). google-genai's messages (Content,
Part, Tool, ...) are google-genai's models, outside this walk; tests/emulator/
test_documented_fields.py sends their documented fields through."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from discovery_documents import VERSIONS, document

from platform_eval.types import (
    EvaluationExperiment,
    EvaluationItem,
    EvaluationMetric,
    EvaluationRun,
    EvaluationSet,
)
from platform_eval.types._base import WireModel

RESOURCES = {
    "EvaluationItem": EvaluationItem,
    "EvaluationSet": EvaluationSet,
    "EvaluationRun": EvaluationRun,
    "EvaluationMetric": EvaluationMetric,
    "EvaluationExperiment": EvaluationExperiment,
}


def _models(annotation: Any) -> list[type[WireModel]]:
    if typing.get_origin(annotation) is None:
        is_model = isinstance(annotation, type) and issubclass(annotation, WireModel)
        return [annotation] if is_model else []
    return [m for inner in typing.get_args(annotation) for m in _models(inner)]


def _walk(version: str) -> tuple[set[str], list[str]]:
    """(the schemas walked, the documented properties no field of ours holds)."""
    prefix = VERSIONS[version]
    schemas = document(version)["schemas"]
    seen: set[str] = set()
    missing: list[str] = []

    def walk(name: str, model: type[WireModel]) -> None:
        if name in seen:
            return
        seen.add(name)
        fields = {(f.alias or key): f for key, f in model.model_fields.items()}
        for prop, spec in schemas[name].get("properties", {}).items():
            found = fields.get(prop)
            if found is None:
                missing.append(f"{name.removeprefix(prefix)}.{prop}")
                continue
            inner = spec.get("items") or spec.get("additionalProperties") or {}
            ref = spec.get("$ref") or inner.get("$ref")
            models = _models(found.annotation)
            if ref and ref.startswith(prefix) and models:
                walk(ref, models[0])

    for name, model in RESOURCES.items():
        if prefix + name in schemas:
            walk(prefix + name, model)
    return seen, missing


@pytest.mark.parametrize("version", list(VERSIONS))
def test_every_documented_field_the_resources_reach_is_a_field_of_ours(version: str) -> None:
    seen, missing = _walk(version)
    assert missing == []
    assert len(seen) > 80  # the resources and the metric specs, configs and results they reach
