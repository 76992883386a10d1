"""EvaluationRun: a run of metrics over an evaluation set, and its configuration and results."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ._base import WireModel, oneof, output_only
from .common import BigQueryDestination, CloudLoggingConfig, EncryptionSpec
from .enums import OpenEvaluationRunState, is_terminal_state
from .rubrics import Rubric
from .status import Status


class MetricAutoraterConfig(WireModel):
    """A metric's judge model (``AutoraterConfig``: ``samplingCount``, ``flipEnabled``)."""

    autorater_model: str | None = None
    flip_enabled: bool | None = None
    generation_config: dict[str, Any] | None = None
    sampling_count: int | None = None


class PredefinedMetricSpec(WireModel):
    metric_spec_name: str | None = None
    metric_spec_parameters: dict[str, Any] | None = None
    #: Per-step judge overrides, by step name.
    step_autorater_configs: dict[str, MetricAutoraterConfig] | None = None


class ComputationBasedMetricSpec(WireModel):
    type: str | None = None
    parameters: dict[str, Any] | None = None


class RougeSpec(WireModel):
    rouge_type: str | None = None
    use_stemmer: bool | None = None
    split_summaries: bool | None = None


class BleuSpec(WireModel):
    use_effective_order: bool | None = None


class MetricConfig(WireModel):
    """One of the metric specs (``UnifiedMetric`` on the wire)."""

    predefined_metric_spec: PredefinedMetricSpec | None = None
    llm_based_metric_spec: dict[str, Any] | None = None
    computation_based_metric_spec: ComputationBasedMetricSpec | None = None
    bleu_spec: BleuSpec | None = None
    rouge_spec: RougeSpec | None = None
    custom_code_execution_spec: dict[str, Any] | None = None
    pointwise_metric_spec: dict[str, Any] | None = None
    pairwise_metric_spec: dict[str, Any] | None = None
    exact_match_spec: dict[str, Any] | None = None
    step_based_llm_metric_spec: dict[str, Any] | None = None
    aggregation_metrics: list[str] | None = None
    metadata: dict[str, Any] | None = None


class AutoraterConfig(WireModel):
    """A run's judge model (``EvaluationRunEvaluationConfig.AutoraterConfig``)."""

    autorater_model: str | None = None
    generation_config: dict[str, Any] | None = None
    sample_count: int | None = None


class RunPredefinedMetricSpec(WireModel):
    """``EvaluationRunMetric.predefinedMetricSpec`` (not the Metric's, which names its
    parameters ``metricSpecParameters``)."""

    metric_spec_name: str | None = None
    parameters: dict[str, Any] | None = None
    step_autorater_configs: dict[str, Any] | None = None


class InlineRubrics(WireModel):
    rubrics: list[Rubric] | None = None


class RubricBasedMetricSpec(WireModel):
    """Rubrics given with the metric itself (``inlineRubrics``) or picked from each request's
    rubric groups by ``rubricGroupKey``."""

    inline_rubrics: InlineRubrics | None = None
    rubric_group_key: str | None = None
    judge_autorater_config: AutoraterConfig | None = None
    metric_prompt_template: str | None = None
    rubric_generation_spec: dict[str, Any] | None = None


class EvaluationRunMetric(WireModel):
    metric: str | None = None
    metric_resource_name: str | None = None
    metric_config: MetricConfig | None = None
    computation_based_metric_spec: ComputationBasedMetricSpec | None = None
    llm_based_metric_spec: dict[str, Any] | None = None
    predefined_metric_spec: RunPredefinedMetricSpec | None = None
    rubric_based_metric_spec: RubricBasedMetricSpec | None = None

    _one_spec = oneof(
        "predefined_metric_spec",
        "computation_based_metric_spec",
        "llm_based_metric_spec",
        "rubric_based_metric_spec",
    )


class GcsDestination(WireModel):
    output_uri_prefix: str | None = None


class OutputConfig(WireModel):
    gcs_destination: GcsDestination | None = None
    bigquery_destination: BigQueryDestination | None = None

    _one_destination = oneof("gcs_destination", "bigquery_destination")


class DatasetCustomMetric(WireModel):
    """A dataset-level aggregation of the run's scores."""

    aggregation_function: str | None = None
    display_name: str | None = None


class EvaluationRubricConfig(WireModel):
    """How rubrics are generated for the run's requests, under ``rubricGroupKey``."""

    rubric_group_key: str | None = None
    predefined_rubric_generation_spec: RunPredefinedMetricSpec | None = None
    rubric_generation_spec: dict[str, Any] | None = None


class EvaluationRunConfig(WireModel):
    metrics: list[EvaluationRunMetric] | None = None
    output_config: OutputConfig | None = None
    autorater_config: dict[str, Any] | None = None
    prompt_template: dict[str, Any] | None = None
    loss_analysis_config: list[dict[str, Any]] | None = None
    allow_cross_region_model: bool | None = None
    cloud_logging_config: CloudLoggingConfig | None = None
    dataset_custom_metrics: list[DatasetCustomMetric] | None = None
    rubric_configs: list[EvaluationRubricConfig] | None = None


class EvaluationRunDataSource(WireModel):
    """What a run reads: a set, a set revision (its items frozen), or a BigQuery table."""

    evaluation_set: str | None = None
    evaluation_set_revision: str | None = None
    bigquery_request_set: dict[str, Any] | None = None

    _one_source = oneof("evaluation_set", "evaluation_set_revision", "bigquery_request_set")


class SummaryMetrics(WireModel):
    metrics: dict[str, Any] | None = None
    total_items: int | None = None
    failed_items: int | None = None


class EvaluationRunResults(WireModel):
    evaluation_set: str | None = None
    summary_metrics: SummaryMetrics | None = None
    loss_analysis_results: list[dict[str, Any]] | None = output_only()
    red_teaming_analysis_results: list[dict[str, Any]] | None = None


class EvaluationRun(WireModel):
    name: str | None = None
    display_name: str | None = None
    metadata: Any = None
    labels: dict[str, str] | None = None
    state: OpenEvaluationRunState | None = output_only()
    data_source: EvaluationRunDataSource | None = None
    evaluation_config: EvaluationRunConfig | None = None
    inference_configs: dict[str, Any] | None = None
    create_time: datetime | None = output_only()
    completion_time: datetime | None = output_only()
    error: Status | None = output_only()
    evaluation_results: EvaluationRunResults | None = output_only()
    evaluation_set_snapshot: str | None = output_only()
    evaluation_experiment: str | None = None
    analysis_configs: list[dict[str, Any]] | None = None
    #: The service account the service runs the evaluation as.
    service_account: str | None = None
    encryption_spec: EncryptionSpec | None = None

    @property
    def id(self) -> str | None:
        return self.name.rsplit("/", 1)[-1] if self.name else None

    @property
    def done(self) -> bool:
        """True once the run reached SUCCEEDED, FAILED or CANCELLED."""
        return is_terminal_state(self.state)

    @property
    def output_uri_prefix(self) -> str | None:
        """Where the service writes result payloads (``evaluationConfig.outputConfig``)."""
        output = self.evaluation_config.output_config if self.evaluation_config else None
        destination = output.gcs_destination if output else None
        return destination.output_uri_prefix if destination else None

    @property
    def summary(self) -> dict[str, Any]:
        """``evaluationResults.summaryMetrics.metrics``, or an empty dict."""
        results = self.evaluation_results
        if results and results.summary_metrics and results.summary_metrics.metrics:
            return dict(results.summary_metrics.metrics)
        return {}


class EvaluationMetric(WireModel):
    """A metric registered in a project, for runs to name by ``metricResourceName``."""

    name: str | None = None
    display_name: str | None = None
    description: str | None = None
    #: Only an LLM-based or a custom code execution metric can be registered.
    metric: MetricConfig | None = None
    gcs_uri: str | None = None
    labels: dict[str, str] | None = None
    encryption_spec: EncryptionSpec | None = None
    create_time: datetime | None = output_only()
    update_time: datetime | None = output_only()

    @property
    def id(self) -> str | None:
        return self.name.rsplit("/", 1)[-1] if self.name else None
