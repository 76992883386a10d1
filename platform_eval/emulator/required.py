"""Fields the discovery documents mark "Required.": a request that leaves one out is refused
with INVALID_ARGUMENT naming its JSON path, as the service refuses it.

``REQUIRED`` is the v1beta1 document's own list for the schemas the evaluation resources reach
(tests/emulator/test_required.py computes it from the document and fails when it changes), less
``LENIENT``: fields the document marks that are not asked of a request, each with why. Where a
message is used in two places, what it requires can hold in one only: ``LENIENT_PATHS`` names
those places. Output-only parts (a RESULT item's ``evaluationResponse``) are cleared before the
check, so their "required" fields are not asked of a request either.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from ..types import (
    CandidateResponse,
    EvaluationRequest,
    EvaluationSet,
    ImportEvaluationSetRequest,
    WireModel,
)
from ..types._base import wire_name
from ._paths import fields_holding, models_within

#: Our model -> its fields the document marks required (Python names), LENIENT left out.
REQUIRED: dict[str, frozenset[str]] = {
    "CandidateResponse": frozenset({"candidate"}),
    "AgentConfig": frozenset({"agent_id"}),
    "AgentEvent": frozenset({"author", "content"}),
    "BigQueryDestination": frozenset({"output_uri"}),
    "BigQueryRequestSet": frozenset({"uri"}),
    "CandidateResult": frozenset({"candidate", "metric"}),
    "CodePreprocessorConfig": frozenset({"code"}),
    "ConversationTurn": frozenset({"turn_index"}),
    "CustomCodeExecutionSpec": frozenset({"evaluation_function"}),
    "CustomCodeParserConfig": frozenset({"parsing_function"}),
    "DataAgentConfig": frozenset({"data_agent"}),
    "DatasetCustomMetric": frozenset({"aggregation_function"}),
    "DiscoveryEngineAssistantConfig": frozenset({"assistant"}),
    "EncryptionSpec": frozenset({"kms_key_name"}),
    "EvaluationExperiment": frozenset({"display_name"}),
    "EvaluationItem": frozenset({"display_name", "evaluation_item_type"}),
    "EvaluationMetric": frozenset({"display_name"}),
    "EvaluationResult": frozenset({"evaluation_request", "evaluation_run", "metric", "request"}),
    "EvaluationRubricConfig": frozenset({"rubric_group_key"}),
    "EvaluationRun": frozenset({"data_source", "display_name"}),
    "EvaluationRunMetric": frozenset({"metric"}),
    "EvaluationSet": frozenset({"evaluation_items"}),
    "GcsDestination": frozenset({"output_uri_prefix"}),
    "GeminiAgentConfig": frozenset({"gemini_agent"}),
    "HarborTask": frozenset({"dataset", "task"}),
    "LLMBasedMetricSpec": frozenset({"metric_prompt_template"}),
    "LanguageHints": frozenset({"language_codes"}),
    "LossAnalysisConfig": frozenset({"metric"}),
    "MetricStep": frozenset({"prompt_template", "step_id"}),
    "ModelConfig": frozenset({"feature_selection_preference"}),
    "MultiSpeakerVoiceConfig": frozenset({"speaker_voice_configs"}),
    "PairwiseMetricSpec": frozenset({"metric_prompt_template"}),
    "PointwiseMetricSpec": frozenset({"metric_prompt_template"}),
    "PredefinedMetricSpec": frozenset({"metric_spec_name"}),
    "Rubric": frozenset({"content"}),
    "RubricVerdict": frozenset({"evaluated_rubric", "verdict"}),
    "RunLLMBasedMetricSpec": frozenset({"metric_prompt_template"}),
    "RunPredefinedMetricSpec": frozenset({"metric_spec_name"}),
    "ScoreRange": frozenset({"max", "min"}),
    "SpeakerVoiceConfig": frozenset({"speaker", "voice_config"}),
    "StepBasedLlmMetricSpec": frozenset({"steps"}),
    "TranslationConfig": frozenset({"target_language_code"}),
    "UserScenario": frozenset({"conversation_plan", "starting_prompt"}),
}

#: Marked required, left out by the official client (so taken by the service), with why.
LENIENT: dict[str, dict[str, str]] = {
    "ComputationBasedMetricSpec": {
        "type": "the metrics the emulator adds to the service's (ADK's criteria) are named by "
        "the run metric's `metric` and carry their options in `parameters`, with no type",
    },
    "EvaluationExperiment": {
        "evaluation_runs": "an experiment is created before its runs, which join it as made",
    },
    "EvaluationSet": {
        "display_name": "the official SDK's create_evaluation_run(dataset=EvaluationDataset) "
        "(google-cloud-aiplatform 2.7.0; agents-cli `eval submit`) creates its set with none",
    },
    "LossAnalysisConfig": {
        "candidate": "the official SDK's loss_analysis_metrics sends none (google-cloud-aiplatform "
        "2.7.0): the failures of every candidate are analysed",
    },
}


#: Where a field is not required though its message requires it elsewhere (a JSON path's end,
#: list positions left out) -> why.
LENIENT_PATHS: dict[str, str] = {
    f"{wire_name(EvaluationRequest, 'golden_response')}."
    f"{wire_name(CandidateResponse, 'candidate')}": "a golden response is the reference, "
    "nobody's candidate",
    f"{wire_name(ImportEvaluationSetRequest, 'evaluation_set')}."
    f"{wire_name(EvaluationSet, 'evaluation_items')}": "an import's set gets its items from "
    "the import",
}

#: The models that require a field.
_REQUIRING = frozenset(REQUIRED)

_POSITIONS = re.compile(r"\[[^\]]*\]")


def missing(model: WireModel, path: str = "", *, top: bool = True) -> Iterator[str]:
    """The JSON paths of the required fields ``model`` leaves unset (None, or an empty string,
    list or map), nested ones included; ``top=False`` checks the nested models only (a patch
    sets only some of the resource's own fields).

    Every request body is walked (an agent item holds dozens of models): iteratively, with what
    each class requires and holds worked out once (``_plan``)."""
    own = top
    stack: list[tuple[WireModel, str]] = [(model, path)]
    while stack:
        node, where = stack.pop()
        required, holding = _plan(type(node))
        if own:
            for name, wire in required:
                if _unset(getattr(node, name)):
                    at = f"{where}.{wire}" if where else wire
                    if not _lenient(at):
                        yield at
        own = True  # the models inside are checked whole
        given = node.model_fields_set
        inner: list[tuple[WireModel, str]] = []
        for name, wire in holding:
            if name in given and (value := getattr(node, name)) is not None:
                models_within(value, f"{where}.{wire}" if where else wire, inner)
        stack.extend(reversed(inner))


@functools.cache
def _plan(cls: type[WireModel]) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(Python name, JSON name) of the fields ``cls`` requires, and of those that can hold a
    model that requires some, in the model's order."""
    fields = cls.model_fields
    holding = fields_holding(cls, _REQUIRING)
    required = sorted(REQUIRED.get(cls.__name__, ()))
    return (
        tuple((name, fields[name].alias or name) for name in required),
        tuple((name, field.alias or name) for name, field in fields.items() if name in holding),
    )


def _lenient(where: str) -> bool:
    bare = _POSITIONS.sub("", where)
    return any(bare == end or bare.endswith(f".{end}") for end in LENIENT_PATHS)


def _unset(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)
