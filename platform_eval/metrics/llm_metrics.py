"""Custom LLM metrics: a prompt template of yours, filled per candidate and scored by a model.

This is what the official client's ``LLMMetric(name=..., prompt_template=...)`` sends
(``llmBasedMetricSpec.metricPromptTemplate``, or the older ``pointwiseMetricSpec``), inline in
a run or registered as an EvaluationMetric. The template's ``{prompt}``, ``{response}`` and
``{reference}`` (and the keys of a prompt's ``value`` or ``promptTemplateData``) are filled from
each candidate's request, and the model judge answers with a score and an explanation
(``metrics.model_rubrics.grade``: through the run's model judge, with the metric's own
``judgeAutoraterConfig.autoraterModel`` when it names one). No model judge configured, or a
placeholder the request cannot fill: the candidate is NOT_EVALUATED with the reason, never
scored by guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from ..types import (
    CandidateResult,
    EvaluationRunMetric,
    LLMBasedMetricSpec,
    PointwiseMetricSpec,
    RunLLMBasedMetricSpec,
)
from . import model_rubrics
from ._invocations import Subject, content_text
from ._spec import MetricError, MetricSpec, NotEvaluatedError
from .judges import JudgeError, Judges
from .model_judge import CallLabel

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _template_spec(
    metric: EvaluationRunMetric,
) -> RunLLMBasedMetricSpec | LLMBasedMetricSpec | PointwiseMetricSpec | None:
    config = metric.metric_config
    for spec in (
        metric.llm_based_metric_spec,
        config.llm_based_metric_spec if config else None,
        config.pointwise_metric_spec if config else None,
    ):
        if spec is not None and spec.metric_prompt_template:
            return spec
    return None


def custom_spec(metric: EvaluationRunMetric) -> MetricSpec | None:
    """The run metric as a custom LLM metric, or None when it is not one."""
    spec = _template_spec(metric)
    if spec is None:
        return None
    if not metric.metric:
        raise MetricError("a custom LLM metric needs its name in `metric`")
    params = {
        "prompt_template": spec.metric_prompt_template,
        "system_instruction": spec.system_instruction,
    }
    own_judge = None if isinstance(spec, PointwiseMetricSpec) else spec.judge_autorater_config
    if own_judge is not None and own_judge.autorater_model:
        params["judge_model"] = own_judge.autorater_model
    return MetricSpec(metric.metric, params, scorer=score_custom)


def _variables(subject: Subject) -> dict[str, str]:
    request = subject.request
    found: dict[str, str] = {}
    prompt = request.prompt
    if prompt is not None:
        if prompt.text is not None:
            found["prompt"] = prompt.text
        for key, value in (prompt.value or {}).items():
            found[key] = value if isinstance(value, str) else json.dumps(value)
        template_data = prompt.prompt_template_data
        for key, content in ((template_data.values or {}) if template_data else {}).items():
            found[key] = content_text(content)
    if request.golden_response is not None:
        found["reference"] = subject.turns.expected_final_text
    found["response"] = subject.final_text
    return found


def fill(template: str, variables: Mapping[str, str]) -> str:
    """The template with each ``{name}`` replaced; a name the request lacks is an error."""
    missing = sorted({m for m in _PLACEHOLDER.findall(template) if m not in variables})
    if missing:
        raise NotEvaluatedError(
            f"the prompt template names {', '.join('{' + m + '}' for m in missing)}, which this "
            f"request does not have (it has {', '.join(sorted(variables))})"
        )
    return _PLACEHOLDER.sub(lambda match: variables[match[1]], template)


def score_custom(spec: MetricSpec, subject: Subject, judges: Judges) -> CandidateResult:
    model = judges.model_for(spec.params)
    if judges.model is None or model is None:
        raise NotEvaluatedError(
            f"the custom LLM metric {spec.name!r} needs a judge model; none is configured "
            "(PLATFORM_EVAL_JUDGE_MODEL names a Gemini model for the emulator)"
        )
    prompt = fill(str(spec.params["prompt_template"]), _variables(subject))
    try:
        label = CallLabel(spec.name, subject.case_id, subject.candidate.candidate or "")
        value, explanation = model_rubrics.grade(
            judges.model, model, prompt, spec.params.get("system_instruction"), label
        )
    except JudgeError as exc:
        raise NotEvaluatedError(str(exc)) from None
    return CandidateResult(
        candidate=subject.candidate.candidate,
        metric=spec.name,
        score=value,
        explanation=explanation,
    )
