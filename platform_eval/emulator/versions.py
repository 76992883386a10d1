"""What ``v1`` serves: exactly the v1 discovery document, a subset of v1beta1's.

Requests to ``v1`` that set a field only v1beta1 has are refused naming it, and what ``v1``
answers leaves those fields out; collections only v1beta1 has (``evaluationExperiments``) are
not served there. The tables below are the difference of the two documents for the schemas
the emulator serves (tests/emulator/test_versions.py computes it from the documents and fails
when it changes).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from .._names import EXPERIMENTS, ITEMS, RUNS, SETS
from ..types import EvaluationItem, EvaluationRun, EvaluationSet, WireModel
from ._paths import fields_holding, models_in, within

#: Our model -> its fields only v1beta1 has (Python names).
V1BETA1_ONLY_FIELDS: dict[str, frozenset[str]] = {
    "AgentRunConfig": frozenset({"discovery_engine_assistant_config"}),
    "CandidateResponse": frozenset({"events"}),
    "CustomCodeExecutionSpec": frozenset({"code_execution_region"}),
    "CustomCodeParserConfig": frozenset({"code_execution_region"}),
    "EvaluationItem": frozenset({"harbor_task"}),
    "EvaluationResult": frozenset({"evaluation_request_revision"}),
    "EvaluationRun": frozenset({"evaluation_experiment"}),
    "EvaluationRunDataSource": frozenset({"evaluation_set_revision"}),
    "EvaluationRunResults": frozenset({"loss_analysis_results"}),
    "EvaluationSet": frozenset({"harbor_dataset"}),
    "GenerationConfig": frozenset({"model_config_"}),
    "InferenceConfig": frozenset(
        {"agent_config", "harbor_run_config", "raw_agent_trajectory_destination"}
    ),
    "MetricConfig": frozenset({"step_based_llm_metric_spec"}),
    "PredefinedMetricSpec": frozenset({"step_autorater_configs"}),
    "RunPredefinedMetricSpec": frozenset({"step_autorater_configs"}),
}

#: The models with fields only v1beta1 has.
_HAVE_ONLY = frozenset(V1BETA1_ONLY_FIELDS)

#: Collections v1 does not have.
V1BETA1_ONLY_COLLECTIONS = frozenset({EXPERIMENTS})

#: The models of the resources v1 answers with, whose v1beta1-only fields it leaves out.
_SERVED: dict[str, type[WireModel]] = {
    ITEMS: EvaluationItem,
    SETS: EvaluationSet,
    RUNS: EvaluationRun,
}


@functools.cache
def served_paths(collection: str) -> tuple[tuple[str, ...], ...]:
    """Where a served resource of ``collection`` can hold a v1beta1-only field, as JSON paths
    (``*``: every element of a list or value of a map), found by walking its model."""
    model = _SERVED.get(collection)
    return tuple(_only_paths(model, frozenset({model}))) if model else ()


def _only_paths(model: type[WireModel], seen: frozenset[type]) -> Iterator[tuple[str, ...]]:
    only = V1BETA1_ONLY_FIELDS.get(model.__name__, frozenset())
    for name, field in model.model_fields.items():
        wire = field.alias or name
        if name in only:
            yield (wire,)
            continue
        for inner, steps in models_in(field.annotation):
            if inner not in seen:  # a model that holds itself is walked once
                for rest in _only_paths(inner, seen | {inner}):
                    yield (wire, *steps, *rest)


def v1beta1_only(model: WireModel, path: str = "") -> Iterator[str]:
    """The JSON paths of the v1beta1-only fields ``model`` sets, nested ones included."""
    only = V1BETA1_ONLY_FIELDS.get(type(model).__name__, frozenset())
    holding = fields_holding(type(model), _HAVE_ONLY)
    for name in model.model_fields_set:
        if name not in only and name not in holding:
            continue
        value = getattr(model, name)
        if value is None:
            continue
        wire = type(model).model_fields[name].alias or name
        here = f"{path}.{wire}" if path else wire
        if name in only:
            yield here
            continue
        yield from within(value, here, v1beta1_only)


def strip_for_v1(collection: str, resource: dict[str, Any]) -> dict[str, Any]:
    """``resource`` (the stored JSON) without the fields v1 does not have."""
    paths = served_paths(collection)
    if not paths:
        return resource
    copy = dict(resource)
    for path in paths:
        _drop(copy, path)
    return copy


def _drop(node: Any, path: tuple[str, ...]) -> None:
    head, rest = path[0], path[1:]
    if head == "*":
        # ``node`` is a copy already: its elements are replaced by copies before changing.
        keys = (
            range(len(node))
            if isinstance(node, list)
            else list(node)
            if isinstance(node, dict)
            else []
        )
        for key in keys:
            child = node[key]
            if isinstance(child, dict):
                node[key] = child = dict(child)
                _drop(child, rest)
        return
    if not isinstance(node, dict) or head not in node:
        return
    if not rest:
        del node[head]
        return
    child = node[head]
    # Copy on the way down: the stored JSON is shared.
    node[head] = child = (
        [dict(c) if isinstance(c, dict) else c for c in child]
        if isinstance(child, list)
        else dict(child)
        if isinstance(child, dict)
        else child
    )
    _drop(child, rest)
