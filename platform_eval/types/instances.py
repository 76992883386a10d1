"""``:evaluateInstances``: one instance scored online by metrics, as the location method takes it.

The metric-based form (``metrics`` or ``metricSources`` with one ``instance``) is typed here;
the older per-metric inputs (``exactMatchInput``, ``bleuInput``, ``toolNameMatchInput``, ...)
travel as the JSON objects the discovery document describes, each answered by its own result
field (``exactMatchResults``, ...).
"""

from __future__ import annotations

from typing import Any

from google.genai.types import Content

from ._base import WireModel
from .agent_data import AgentConfig, AgentData
from .common import GcsDestination
from .inference import GeminiAgentConfig
from .items import UserScenario
from .metric_specs import (
    MetricAutoraterConfig,
    MetricConfig,
    PredefinedMetricSpec,
    RubricGenerationSpec,
)
from .rubrics import Rubric, RubricGroup, RubricVerdict
from .status import Status


class InstanceDataContents(WireModel):
    contents: list[Content] | None = None


class InstanceData(WireModel):
    """A prompt, response or reference: text, or contents (a conversation)."""

    text: str | None = None
    contents: InstanceDataContents | None = None


class MapInstance(WireModel):
    map_instance: dict[str, InstanceData] | None = None


class EvaluationInstance(WireModel):
    prompt: InstanceData | None = None
    response: InstanceData | None = None
    reference: InstanceData | None = None
    #: Further template variables, by name.
    other_data: MapInstance | None = None
    #: The agent's run: its turns of events.
    agent_eval_data: AgentData | None = None
    #: The older agent shape; read as the document has it, not evaluated by the emulator.
    agent_data: dict[str, Any] | None = None
    interactions_data_source: dict[str, Any] | None = None
    rubric_groups: dict[str, RubricGroup] | None = None


class MetricSource(WireModel):
    """A metric inline, or a registered ``evaluationMetrics`` resource by name."""

    metric: MetricConfig | None = None
    metric_resource_name: str | None = None


class EvaluateInstancesRequest(WireModel):
    """The metric-based request; the per-metric inputs (``bleuInput``, ...) are kept as given."""

    metrics: list[MetricConfig] | None = None
    metric_sources: list[MetricSource] | None = None
    instance: EvaluationInstance | None = None
    autorater_config: MetricAutoraterConfig | None = None
    location: str | None = None
    allow_cross_region_model: bool | None = None


class MetricResult(WireModel):
    """One metric's result for the instance; ``error`` says why there is no score."""

    score: float | None = None
    explanation: str | None = None
    rubric_verdicts: list[RubricVerdict] | None = None
    error: Status | None = None


class EvaluateInstancesResponse(WireModel):
    """``metricResults`` for the metric-based request; for a per-metric input, its result field
    (``exactMatchResults``, ``pointwiseMetricResult``, ...) as the document names it."""

    metric_results: list[MetricResult] | None = None


class GenerateInstanceRubricsRequest(WireModel):
    """Rubrics for one prompt (``contents``), written by a model: by a predefined metric's
    recipe, a registered metric's, or a prompt template of the request's own."""

    contents: list[Content] | None = None
    predefined_rubric_generation_spec: PredefinedMetricSpec | None = None
    rubric_generation_spec: RubricGenerationSpec | None = None
    metric_resource_name: str | None = None
    #: The agent the prompt is for (instructions, tools), for agent-based rubrics.
    agent_config: dict[str, Any] | None = None
    location: str | None = None


class GenerateInstanceRubricsResponse(WireModel):
    generated_rubrics: list[Rubric] | None = None


class UserScenarioGenerationConfig(WireModel):
    #: How many scenarios to write (at most 100); int64, a string on the wire.
    user_scenario_count: int | None = None
    simulation_instruction: str | None = None
    environment_data: str | None = None
    model_name: str | None = None


class GenerateUserScenariosRequest(WireModel):
    """Scenarios for an agent system: its agents by id, the root among them."""

    agents: dict[str, AgentConfig] | None = None
    root_agent_id: str | None = None
    gemini_agent_config: GeminiAgentConfig | None = None
    user_scenario_generation_config: UserScenarioGenerationConfig | None = None
    allow_cross_region_model: bool | None = None
    location: str | None = None


class GenerateUserScenariosResponse(WireModel):
    user_scenarios: list[UserScenario] | None = None


class GcsSource(WireModel):
    uris: list[str] | None = None


class EvaluationDatasetSource(WireModel):
    """``EvaluationDataset`` of ``:evaluateDataset``: where the rows are."""

    gcs_source: GcsSource | None = None
    bigquery_source: dict[str, Any] | None = None


class EvaluateDatasetOutputConfig(WireModel):
    gcs_destination: GcsDestination | None = None


class EvaluateDatasetRequest(WireModel):
    dataset: EvaluationDatasetSource | None = None
    metrics: list[MetricConfig] | None = None
    output_config: EvaluateDatasetOutputConfig | None = None
    autorater_config: MetricAutoraterConfig | None = None
    location: str | None = None


class EvaluateDatasetResponse(WireModel):
    """The aggregates (``aggregationOutput``) and where the results were written."""

    aggregation_output: dict[str, Any] | None = None
    output_info: dict[str, Any] | None = None
