"""EvaluationRun: a run of metrics over an evaluation set, and its configuration and results."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import field_validator

from ._base import Timestamp, WireModel, oneof, output_only
from .common import BigQueryDestination, CloudLoggingConfig, EncryptionSpec, GcsDestination
from .enums import OpenEvaluationRunState, is_terminal_state
from .inference import InferenceConfig, PromptTemplate
from .loss_analysis import AnalysisConfig, LossAnalysisConfig, LossAnalysisResult
from .metric_specs import (
    AutoraterConfig,
    ComputationBasedMetricSpec,
    MetricConfig,
    RunLLMBasedMetricSpec,
    RunPredefinedMetricSpec,
    RunRubricGenerationSpec,
)
from .rubrics import Rubric
from .status import Status

#: What the service answers as a created run's completion time: a placeholder, not a time
#: (cloud-custodian's flight ``vertexai-evaluation-run-filtering``, v1, 2026-08-14).
NO_COMPLETION_TIME = "1970-01-01T00:00:00Z"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def summary_key(candidate: str | None, metric: str, aggregation: str) -> str:
    """A key of ``summaryMetrics.metrics`` as the service writes it:
    ``<candidate>/<metric>/<AGGREGATION>``; ``<metric>/<AGGREGATION>`` for a result that
    names no candidate (no recording shows one). ``EvaluationRun.summary_by_candidate`` reads
    it back."""
    return f"{candidate}/{metric}/{aggregation}" if candidate else f"{metric}/{aggregation}"


class InlineRubrics(WireModel):
    rubrics: list[Rubric] | None = None


class RubricBasedMetricSpec(WireModel):
    """Rubrics given with the metric itself (``inlineRubrics``) or picked from each request's
    rubric groups by ``rubricGroupKey``."""

    inline_rubrics: InlineRubrics | None = None
    rubric_group_key: str | None = None
    judge_autorater_config: AutoraterConfig | None = None
    metric_prompt_template: str | None = None
    rubric_generation_spec: RunRubricGenerationSpec | None = None


class EvaluationRunMetric(WireModel):
    metric: str | None = None
    metric_resource_name: str | None = None
    metric_config: MetricConfig | None = None
    computation_based_metric_spec: ComputationBasedMetricSpec | None = None
    llm_based_metric_spec: RunLLMBasedMetricSpec | None = None
    predefined_metric_spec: RunPredefinedMetricSpec | None = None
    rubric_based_metric_spec: RubricBasedMetricSpec | None = None

    _one_spec = oneof(
        "predefined_metric_spec",
        "computation_based_metric_spec",
        "llm_based_metric_spec",
        "rubric_based_metric_spec",
    )


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
    rubric_generation_spec: RunRubricGenerationSpec | None = None


class EvaluationRunConfig(WireModel):
    metrics: list[EvaluationRunMetric] | None = None
    output_config: OutputConfig | None = None
    autorater_config: AutoraterConfig | None = None
    prompt_template: PromptTemplate | None = None
    loss_analysis_config: list[LossAnalysisConfig] | None = None
    allow_cross_region_model: bool | None = None
    cloud_logging_config: CloudLoggingConfig | None = None
    dataset_custom_metrics: list[DatasetCustomMetric] | None = None
    rubric_configs: list[EvaluationRubricConfig] | None = None


class SamplingConfig(WireModel):
    """``BigQueryRequestSet.SamplingConfig``: a sample of the table's rows."""

    sampling_count: int | None = None
    #: ``RANDOM``.
    sampling_method: str | None = None
    #: A duration as the API writes it (``"3600s"``).
    sampling_duration: str | None = None


class BigQueryRequestSet(WireModel):
    """Requests read from a BigQuery table: which columns hold the prompt and the responses."""

    uri: str | None = None
    prompt_column: str | None = None
    rubrics_column: str | None = None
    #: Column by candidate name.
    candidate_response_columns: dict[str, str] | None = None
    sampling_config: SamplingConfig | None = None


class EvaluationRunDataSource(WireModel):
    """What a run reads: a set, a set revision (its items frozen), or a BigQuery table."""

    evaluation_set: str | None = None
    evaluation_set_revision: str | None = None
    bigquery_request_set: BigQueryRequestSet | None = None

    _one_source = oneof("evaluation_set", "evaluation_set_revision", "bigquery_request_set")


class SummaryMetrics(WireModel):
    metrics: dict[str, Any] | None = None
    total_items: int | None = None
    failed_items: int | None = None


class EvaluationRunResults(WireModel):
    evaluation_set: str | None = None
    summary_metrics: SummaryMetrics | None = None
    loss_analysis_results: list[LossAnalysisResult] | None = output_only()
    red_teaming_analysis_results: list[dict[str, Any]] | None = None


#: The key of platform-eval's own record in a run's free-form ``metadata``.
METADATA_KEY = "platformEval"


def record_thresholds(metadata: Any, thresholds: dict[str, float]) -> Any:
    """``metadata`` with the thresholds a run is judged by, beside what the caller put there."""
    if not thresholds:
        return metadata
    base = dict(metadata) if isinstance(metadata, dict) else {}
    ours = dict(base.get(METADATA_KEY) or {})
    ours["thresholds"] = dict(thresholds)
    return {**base, METADATA_KEY: ours}


def record_not_evaluated(metadata: Any, not_evaluated: dict[str, dict[str, str]]) -> Any:
    """``metadata`` with the candidates that never reached the run (an agent that failed on a
    case), by eval case id and candidate, each with why: results show them NOT_EVALUATED."""
    if not not_evaluated:
        return metadata
    base = dict(metadata) if isinstance(metadata, dict) else {}
    ours = dict(base.get(METADATA_KEY) or {})
    ours["notEvaluated"] = {case: dict(why) for case, why in not_evaluated.items()}
    return {**base, METADATA_KEY: ours}


def record_agent_usage(metadata: Any, usage: dict[str, dict[str, dict[str, Any]]]) -> Any:
    """``metadata`` with what each candidate's agent run cost and took (model calls, tokens by
    model, seconds per turn), by eval case id and candidate: the results' cost and latency."""
    if not usage:
        return metadata
    base = dict(metadata) if isinstance(metadata, dict) else {}
    ours = dict(base.get(METADATA_KEY) or {})
    ours["agentUsage"] = {case: dict(by) for case, by in usage.items()}
    return {**base, METADATA_KEY: ours}


def record_code_results(metadata: Any, set_name: str) -> Any:
    """``metadata`` with the set holding the local code metrics' RESULT items (computed by the
    caller, beside the run's own): reading the run's results later reads them too."""
    base = dict(metadata) if isinstance(metadata, dict) else {}
    ours = dict(base.get(METADATA_KEY) or {})
    ours["codeResults"] = set_name
    return {**base, METADATA_KEY: ours}


class EvaluationRun(WireModel):
    name: str | None = None
    display_name: str | None = None
    metadata: Any = None
    labels: dict[str, str] | None = None
    state: OpenEvaluationRunState | None = output_only()
    data_source: EvaluationRunDataSource | None = None
    evaluation_config: EvaluationRunConfig | None = None
    #: How each candidate's responses are produced, by candidate name (inference mode).
    inference_configs: dict[str, InferenceConfig] | None = None
    create_time: Timestamp | None = output_only()
    completion_time: Timestamp | None = output_only()
    error: Status | None = output_only()
    evaluation_results: EvaluationRunResults | None = output_only()
    evaluation_set_snapshot: str | None = output_only()
    evaluation_experiment: str | None = None
    #: Beyond the discovery documents of 2026-11-06: the official SDK sends a red-teaming
    #: analysis here. The emulator keeps it and does not run it.
    analysis_configs: list[AnalysisConfig] | None = None
    #: The service account the service runs the evaluation as.
    service_account: str | None = None
    encryption_spec: EncryptionSpec | None = None

    @field_validator("completion_time")
    @classmethod
    def _no_placeholder(cls, value: datetime | None) -> datetime | None:
        # ``NO_COMPLETION_TIME`` in a create's answer: not when the run completed.
        return None if value == _EPOCH else value

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
    def recorded_not_evaluated(self) -> dict[str, dict[str, str]]:
        """Eval case id -> candidate -> why it was not evaluated, as ``record_not_evaluated``
        keeps them in the run's ``metadata``."""
        ours = self.metadata.get(METADATA_KEY) if isinstance(self.metadata, dict) else None
        recorded = ours.get("notEvaluated") if isinstance(ours, dict) else None
        if not isinstance(recorded, dict):
            return {}
        return {
            str(case): {str(c): str(why) for c, why in candidates.items()}
            for case, candidates in recorded.items()
            if isinstance(candidates, dict)
        }

    @property
    def recorded_agent_usage(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Eval case id -> candidate -> its agent run's usage, as ``record_agent_usage`` keeps
        it in the run's ``metadata``."""
        ours = self.metadata.get(METADATA_KEY) if isinstance(self.metadata, dict) else None
        recorded = ours.get("agentUsage") if isinstance(ours, dict) else None
        if not isinstance(recorded, dict):
            return {}
        return {
            str(case): {str(c): dict(u) for c, u in by.items() if isinstance(u, dict)}
            for case, by in recorded.items()
            if isinstance(by, dict)
        }

    @property
    def recorded_code_results(self) -> str | None:
        """The set of the local code metrics' RESULT items kept with the run
        (``record_code_results``), or None."""
        ours = self.metadata.get(METADATA_KEY) if isinstance(self.metadata, dict) else None
        found = ours.get("codeResults") if isinstance(ours, dict) else None
        return found if isinstance(found, str) and found else None

    @property
    def recorded_thresholds(self) -> dict[str, float]:
        """The thresholds the run was started to be judged by, as ``record_thresholds`` keeps
        them in the run's ``metadata`` (the field the API leaves to the caller's tracking).
        Entries that are not numbers are left out here: ``recorded_threshold_entries`` has
        them all, for a reader that refuses them."""
        return {
            metric: float(value)
            for metric, value in self.recorded_threshold_entries.items()
            if isinstance(value, int | float) and not isinstance(value, bool)
        }

    @property
    def recorded_threshold_entries(self) -> dict[str, Any]:
        """Every threshold entry of the run's metadata, as it is stored."""
        ours = self.metadata.get(METADATA_KEY) if isinstance(self.metadata, dict) else None
        recorded = ours.get("thresholds") if isinstance(ours, dict) else None
        return {str(k): v for k, v in recorded.items()} if isinstance(recorded, dict) else {}

    @property
    def summary(self) -> dict[str, Any]:
        """``evaluationResults.summaryMetrics.metrics``, or an empty dict."""
        results = self.evaluation_results
        if results and results.summary_metrics and results.summary_metrics.metrics:
            return dict(results.summary_metrics.metrics)
        return {}

    @property
    def summary_by_candidate(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The summary as the service keys it (``summary_key``), read
        as candidate -> metric -> aggregation -> value (a number; ``MODE`` a list when tied).
        A key with no candidate (``<metric>/<AGGREGATION>``) comes under ``""``; a candidate
        named with slashes (a model's resource name) is kept whole."""
        found: dict[str, dict[str, dict[str, Any]]] = {}
        for key, value in self.summary.items():
            parts = key.rsplit("/", 2)
            if len(parts) == 2:
                parts = ["", *parts]
            if len(parts) != 3:
                continue  # a key of no known shape: left to ``summary``
            candidate, metric, aggregation = parts
            found.setdefault(candidate, {}).setdefault(metric, {})[aggregation] = value
        return found


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
    create_time: Timestamp | None = output_only()
    update_time: Timestamp | None = output_only()

    @property
    def id(self) -> str | None:
        return self.name.rsplit("/", 1)[-1] if self.name else None
