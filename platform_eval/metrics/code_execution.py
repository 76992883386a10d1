"""Custom code-execution metrics (``customCodeExecutionSpec.evaluationFunction``): the user's
``evaluate(instance)`` source, which the service runs in its sandbox.

The engine never runs code it receives by itself: it hands the source and the instance to the
``CodeRunner`` of its judges, which only an emulator started with ``--allow-code-metrics`` has
(a subprocess with a time and a memory limit). Without one the candidate is not evaluated,
saying so, and ``why_not_computable`` refuses the metric before anything is uploaded.

The instance is the service's: ``EvaluationInstance`` as a dict, ``prompt``, ``response`` and
``reference`` as ``{"text": ...}``, and ``agent_data`` (the candidate's, as the wire has it).
"""

from __future__ import annotations

from typing import Any

from ..types import CandidateResult, EvaluationRunMetric
from ._invocations import Subject
from ._spec import MetricError, MetricSpec, NotEvaluatedError
from .judges import CodeRunError, Judges

#: What a refusal says: the flag that lets the emulator run code metrics.
ALLOW_FLAG = "--allow-code-metrics"


def code_spec(metric: EvaluationRunMetric) -> MetricSpec | None:
    """The run metric as a code-execution metric, or None when it is not one."""
    config = metric.metric_config
    spec = config.custom_code_execution_spec if config is not None else None
    if spec is None:
        return None
    if not metric.metric:
        raise MetricError("a custom code metric needs its name in `metric`")
    source = spec.evaluation_function
    if not source or "def evaluate" not in source:
        raise MetricError(
            f"metric {metric.metric!r}: customCodeExecutionSpec.evaluationFunction must define "
            "evaluate(instance)"
        )
    return MetricSpec(metric.metric, {"evaluation_function": source}, scorer=score_code)


def instance(subject: Subject) -> dict[str, Any]:
    """The service's instance of one candidate."""
    found: dict[str, Any] = {}
    prompt = subject.request.prompt
    if prompt is not None and prompt.text is not None:
        found["prompt"] = {"text": prompt.text}
    found["response"] = {"text": subject.final_text}
    if subject.request.golden_response is not None:
        found["reference"] = {"text": subject.turns.expected_final_text}
    agent_data = subject.candidate.agent_data
    if agent_data is not None:
        found["agent_data"] = agent_data.model_dump(mode="json", by_alias=True, exclude_none=True)
    return found


def score_code(spec: MetricSpec, subject: Subject, judges: Judges) -> CandidateResult:
    if judges.code is None:
        raise NotEvaluatedError(
            f"metric {spec.name!r} is a custom code metric: the emulator runs the code it "
            f"receives only when started with {ALLOW_FLAG}"
        )
    try:
        value, explanation = judges.code.run(
            str(spec.params["evaluation_function"]), instance(subject)
        )
    except CodeRunError as exc:
        raise NotEvaluatedError(str(exc)) from None
    return CandidateResult(
        candidate=subject.candidate.candidate,
        metric=spec.name,
        score=value,
        explanation=explanation,
    )
