"""Wire models of the Agent Platform evaluation API (v1beta1).

Attributes are snake_case; JSON on the wire is camelCase. Both spellings are accepted on input.
Message content uses google-genai's ``Content``, ``Part``, ``FunctionCall`` and ``Tool``.
"""

from google.genai.types import Content, FunctionCall, FunctionResponse, Part, Tool

from ._base import WireModel
from .agent_data import AgentConfig, AgentData, AgentEvent, ConversationTurn
from .common import BigQueryDestination, CloudLoggingConfig, EncryptionSpec, TracingContext
from .enums import EvaluationItemType, EvaluationRunState, Importance, is_terminal_state
from .items import (
    CandidateResponse,
    CandidateResult,
    EvaluationItem,
    EvaluationPrompt,
    EvaluationRequest,
    EvaluationResult,
    HarborTask,
    PromptTemplateData,
    UserScenario,
    request_mode_problem,
)
from .operations import Operation
from .revisions import EvaluationItemRevision, EvaluationSetRevision
from .rubrics import Rubric, RubricContent, RubricContentProperty, RubricGroup, RubricVerdict
from .runs import (
    AutoraterConfig,
    BleuSpec,
    ComputationBasedMetricSpec,
    DatasetCustomMetric,
    EvaluationMetric,
    EvaluationRubricConfig,
    EvaluationRun,
    EvaluationRunConfig,
    EvaluationRunDataSource,
    EvaluationRunMetric,
    EvaluationRunResults,
    GcsDestination,
    InlineRubrics,
    MetricAutoraterConfig,
    MetricConfig,
    OutputConfig,
    PredefinedMetricSpec,
    RougeSpec,
    RubricBasedMetricSpec,
    RunPredefinedMetricSpec,
    SummaryMetrics,
)
from .sets import (
    EvaluationExperiment,
    EvaluationSet,
    HarborDataset,
    ImportEvaluationSetRequest,
    ImportGcsSource,
    ImportInlineSource,
    ImportSchemaConfig,
)
from .status import Status

__all__ = [
    "AgentConfig",
    "AgentData",
    "AgentEvent",
    "AutoraterConfig",
    "BigQueryDestination",
    "BleuSpec",
    "CandidateResponse",
    "CandidateResult",
    "CloudLoggingConfig",
    "ComputationBasedMetricSpec",
    "Content",
    "ConversationTurn",
    "DatasetCustomMetric",
    "EncryptionSpec",
    "EvaluationExperiment",
    "EvaluationItem",
    "EvaluationItemRevision",
    "EvaluationItemType",
    "EvaluationMetric",
    "EvaluationPrompt",
    "EvaluationRequest",
    "EvaluationResult",
    "EvaluationRubricConfig",
    "EvaluationRun",
    "EvaluationRunConfig",
    "EvaluationRunDataSource",
    "EvaluationRunMetric",
    "EvaluationRunResults",
    "EvaluationRunState",
    "EvaluationSet",
    "EvaluationSetRevision",
    "FunctionCall",
    "FunctionResponse",
    "GcsDestination",
    "HarborDataset",
    "HarborTask",
    "ImportEvaluationSetRequest",
    "ImportGcsSource",
    "ImportInlineSource",
    "ImportSchemaConfig",
    "Importance",
    "InlineRubrics",
    "MetricAutoraterConfig",
    "MetricConfig",
    "Operation",
    "OutputConfig",
    "Part",
    "PredefinedMetricSpec",
    "PromptTemplateData",
    "RougeSpec",
    "Rubric",
    "RubricBasedMetricSpec",
    "RubricContent",
    "RubricContentProperty",
    "RubricGroup",
    "RubricVerdict",
    "RunPredefinedMetricSpec",
    "Status",
    "SummaryMetrics",
    "Tool",
    "TracingContext",
    "UserScenario",
    "WireModel",
    "is_terminal_state",
    "request_mode_problem",
]
