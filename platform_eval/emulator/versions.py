"""What ``v1`` serves: exactly the v1 discovery document, a subset of v1beta1's.

Requests to ``v1`` that set a field only v1beta1 has are refused naming it, and what ``v1``
answers leaves those fields out; collections only v1beta1 has (``evaluationExperiments``) are
not served there. The tables below are the difference of the two documents for the schemas
the emulator serves (tests/test_versions.py computes it from the documents and fails when it
changes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._names import EXPERIMENTS, ITEMS, RUNS, SETS
from ..types import WireModel

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

#: Collections v1 does not have.
V1BETA1_ONLY_COLLECTIONS = frozenset({EXPERIMENTS})

#: Where a served resource of each collection can hold a v1beta1-only field, as JSON paths
#: (``*``: every element of a list or value of a map).
_SERVED_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    ITEMS: (
        ("harborTask",),
        ("evaluationRequest", "candidateResponses", "*", "events"),
        ("evaluationResponse", "evaluationRequestRevision"),
        ("evaluationResponse", "request", "candidateResponses", "*", "events"),
    ),
    SETS: (("harborDataset",),),
    RUNS: (
        ("evaluationExperiment",),
        ("dataSource", "evaluationSetRevision"),
        ("evaluationResults", "lossAnalysisResults"),
        ("inferenceConfigs", "*", "agentConfig"),
        ("inferenceConfigs", "*", "harborRunConfig"),
        ("inferenceConfigs", "*", "rawAgentTrajectoryDestination"),
        ("inferenceConfigs", "*", "generationConfig", "modelConfig"),
        ("inferenceConfigs", "*", "agentRunConfig", "discoveryEngineAssistantConfig"),
    ),
}


def v1beta1_only(model: WireModel, path: str = "") -> Iterator[str]:
    """The JSON paths of the v1beta1-only fields ``model`` sets, nested ones included."""
    only = V1BETA1_ONLY_FIELDS.get(type(model).__name__, frozenset())
    for name in model.model_fields_set:
        value = getattr(model, name)
        if value is None:
            continue
        wire = type(model).model_fields[name].alias or name
        here = f"{path}.{wire}" if path else wire
        if name in only:
            yield here
            continue
        yield from _nested(value, here)


def _nested(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, WireModel):
        yield from v1beta1_only(value, path)
    elif isinstance(value, list):
        for index, element in enumerate(value):
            yield from _nested(element, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, element in value.items():
            yield from _nested(element, f"{path}[{key!r}]")


def strip_for_v1(collection: str, resource: dict[str, Any]) -> dict[str, Any]:
    """``resource`` (the stored JSON) without the fields v1 does not have."""
    paths = _SERVED_PATHS.get(collection)
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
