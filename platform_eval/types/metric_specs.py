"""The specs of a metric: what it computes and with which judge.

Two families with near-identical names: a run's ``EvaluationRunMetric`` carries the
``Run*`` specs (``EvaluationRunMetric.*Spec`` in the documents), and a ``Metric`` (inline in
``metricConfig``, or registered as an EvaluationMetric) carries the others. They differ in small
ways (``parameters`` against ``metricSpecParameters``, ``sampleCount`` against
``samplingCount``), so each keeps its own model.
"""

from __future__ import annotations

from typing import Any

from ._base import WireModel, oneof, reserved_name
from .generation import GenerationConfig


class MetricAutoraterConfig(WireModel):
    """A metric's judge model (``AutoraterConfig``: ``samplingCount``, ``flipEnabled``)."""

    autorater_model: str | None = None
    flip_enabled: bool | None = None
    generation_config: GenerationConfig | None = None
    sampling_count: int | None = None


class AutoraterConfig(WireModel):
    """A run's judge model (``EvaluationRunEvaluationConfig.AutoraterConfig``)."""

    autorater_model: str | None = None
    generation_config: GenerationConfig | None = None
    sample_count: int | None = None


class PredefinedMetricSpec(WireModel):
    metric_spec_name: str | None = None
    metric_spec_parameters: dict[str, Any] | None = None
    #: Per-step judge overrides, by step name.
    step_autorater_configs: dict[str, MetricAutoraterConfig] | None = None


class RunPredefinedMetricSpec(WireModel):
    """``EvaluationRunMetric.predefinedMetricSpec`` (not the Metric's, which names its
    parameters ``metricSpecParameters``)."""

    metric_spec_name: str | None = None
    parameters: dict[str, Any] | None = None
    step_autorater_configs: dict[str, AutoraterConfig] | None = None


class ComputationBasedMetricSpec(WireModel):
    type: str | None = None
    parameters: dict[str, Any] | None = None


class RougeSpec(WireModel):
    rouge_type: str | None = None
    use_stemmer: bool | None = None
    split_summaries: bool | None = None


class BleuSpec(WireModel):
    use_effective_order: bool | None = None


class ExactMatchSpec(WireModel):
    """1 when the response equals the reference, else 0: the spec has no settings."""


class CustomCodeExecutionSpec(WireModel):
    """A metric computed by Python code the service runs in a sandbox."""

    #: The source of a function ``evaluate(instance) -> float``.
    evaluation_function: str | None = None
    code_execution_region: str | None = None


class CustomCodeParserConfig(WireModel):
    parsing_function: str | None = None
    code_execution_region: str | None = None


class EvaluationParserConfig(WireModel):
    """How a judge's answer is read: by custom code instead of the default parser."""

    custom_code_parser_config: CustomCodeParserConfig | None = None


class CustomOutputFormatConfig(WireModel):
    #: Return the judge's answer unparsed.
    return_raw_output: bool | None = None


class RubricGenerationSpec(WireModel):
    """How rubrics are generated for each request before they are judged."""

    #: The model that writes the rubrics (``modelConfig`` on the wire).
    model_config_: MetricAutoraterConfig | None = reserved_name("modelConfig")
    prompt_template: str | None = None
    #: ``PROPERTY``, ``NL_QUESTION_ANSWER`` or ``PYTHON_CODE_ASSERTION``.
    rubric_content_type: str | None = None
    rubric_type_ontology: list[str] | None = None


class RunRubricGenerationSpec(WireModel):
    """``EvaluationRunMetric.RubricGenerationSpec``: a run's rubric generation, which may
    also name a registered metric to generate with."""

    metric_resource_name: str | None = None
    model_config_: AutoraterConfig | None = reserved_name("modelConfig")
    prompt_template: str | None = None
    rubric_content_type: str | None = None
    rubric_type_ontology: list[str] | None = None


class LLMBasedMetricSpec(WireModel):
    """A metric judged by a model from a prompt template of yours (``LLMMetric``)."""

    metric_prompt_template: str | None = None
    system_instruction: str | None = None
    judge_autorater_config: MetricAutoraterConfig | None = None
    rubric_group_key: str | None = None
    rubric_generation_spec: RubricGenerationSpec | None = None
    predefined_rubric_generation_spec: PredefinedMetricSpec | None = None
    result_parser_config: EvaluationParserConfig | None = None
    additional_config: dict[str, Any] | None = None

    _one_rubric_source = oneof(
        "rubric_group_key", "rubric_generation_spec", "predefined_rubric_generation_spec"
    )


class RunLLMBasedMetricSpec(WireModel):
    """``EvaluationRunMetric.LLMBasedMetricSpec``: as ``LLMBasedMetricSpec``, with a run's
    judge settings and no result parser."""

    metric_prompt_template: str | None = None
    system_instruction: str | None = None
    judge_autorater_config: AutoraterConfig | None = None
    rubric_group_key: str | None = None
    rubric_generation_spec: RunRubricGenerationSpec | None = None
    predefined_rubric_generation_spec: RunPredefinedMetricSpec | None = None
    additional_config: dict[str, Any] | None = None

    _one_rubric_source = oneof(
        "rubric_group_key", "rubric_generation_spec", "predefined_rubric_generation_spec"
    )


class PointwiseMetricSpec(WireModel):
    """The older spelling of an LLM metric over one response."""

    metric_prompt_template: str | None = None
    system_instruction: str | None = None
    custom_output_format_config: CustomOutputFormatConfig | None = None


class PairwiseMetricSpec(WireModel):
    """An LLM metric that compares a candidate response with a baseline."""

    metric_prompt_template: str | None = None
    system_instruction: str | None = None
    candidate_response_field_name: str | None = None
    baseline_response_field_name: str | None = None
    custom_output_format_config: CustomOutputFormatConfig | None = None


class CodePreprocessorConfig(WireModel):
    #: Python that turns the AgentData into what the steps see.
    code: str | None = None


class TraceCompressionConfig(WireModel):
    max_turn_count: int | None = None
    thoughts_filtered: bool | None = None


class FilterPreprocessorConfig(WireModel):
    trace_compression_config: TraceCompressionConfig | None = None


class AgentDataPreprocessor(WireModel):
    """What is done to a trace before the first step: filtering, or code of yours."""

    code_config: CodePreprocessorConfig | None = None
    filter_config: FilterPreprocessorConfig | None = None

    _one_preprocessor = oneof("code_config", "filter_config")


class MetricStep(WireModel):
    """``StepBasedLlmMetricSpec.Step``: one judge call of a multi-step metric."""

    step_id: str | None = None
    prompt_template: str | None = None
    autorater_config: MetricAutoraterConfig | None = None
    response_parser_config: EvaluationParserConfig | None = None


class StepBasedLlmMetricSpec(WireModel):
    """A metric judged in several model calls over an agent's trace."""

    preprocessor: AgentDataPreprocessor | None = None
    steps: list[MetricStep] | None = None


class ScoreRange(WireModel):
    min: float | None = None
    max: float | None = None
    step: float | None = None
    description: str | None = None


class MetricMetadata(WireModel):
    """How a metric is shown: its title and the range of its scores."""

    title: str | None = None
    score_range: ScoreRange | None = None
    other_metadata: dict[str, Any] | None = None


class MetricConfig(WireModel):
    """One of the metric specs (``Metric`` on the wire, ``UnifiedMetric`` in the protos)."""

    predefined_metric_spec: PredefinedMetricSpec | None = None
    llm_based_metric_spec: LLMBasedMetricSpec | None = None
    computation_based_metric_spec: ComputationBasedMetricSpec | None = None
    bleu_spec: BleuSpec | None = None
    rouge_spec: RougeSpec | None = None
    custom_code_execution_spec: CustomCodeExecutionSpec | None = None
    pointwise_metric_spec: PointwiseMetricSpec | None = None
    pairwise_metric_spec: PairwiseMetricSpec | None = None
    exact_match_spec: ExactMatchSpec | None = None
    step_based_llm_metric_spec: StepBasedLlmMetricSpec | None = None
    aggregation_metrics: list[str] | None = None
    metadata: MetricMetadata | None = None
