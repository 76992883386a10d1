"""Local code metrics: an agents-cli ``custom_function`` (or ``custom_function_file``), the
user's own ``evaluate(instance)``, run in the evaluating process as agents-cli and the GenAI
Eval SDK run it.

The instance is what the SDK's custom-metric handler passes: the eval case as a dict
(``prompt``, ``reference``, ``agent_data``, ... in snake_case) with ``response``, the candidate's
final answer. The function returns a number, or ``{"score": ..., "explanation": ...}``. One
that raises, or returns anything else, gives that case no score, with the exception's last
line; the other cases go on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..types import CandidateResponse, CandidateResult, Content, EvaluationRequest, Part
from ._invocations import Subject, final_text
from ._spec import MetricSpec
from .judges import Judges

CodeFunction = Callable[[dict[str, Any]], Any]


def load_function(name: str, source: str, origin: str) -> CodeFunction:
    """The user's ``evaluate``: their module run, as agents-cli runs it (``origin`` names the
    file, or the config, the source came from)."""
    namespace: dict[str, Any] = {"__name__": f"platform_eval_code_metric_{name}"}
    exec(compile(source, origin, "exec"), namespace)  # the user's own code, run on purpose
    function = namespace.get("evaluate")
    if not callable(function):
        raise ValueError(f"{origin} defines no function evaluate(instance)")
    return function  # type: ignore[no-any-return]


def _content(role: str, text: str) -> dict[str, Any]:
    return Content(role=role, parts=[Part(text=text)]).model_dump(mode="json", exclude_none=True)


def instance(
    case_id: str, request: EvaluationRequest, response: CandidateResponse
) -> dict[str, Any]:
    """The SDK's instance for one candidate response of one request."""
    found: dict[str, Any] = {"eval_case_id": case_id}
    prompt = request.prompt.text if request.prompt is not None else None
    if prompt is not None:
        found["prompt"] = _content("user", prompt)
    if request.golden_response is not None and (reference := final_text(request.golden_response)):
        found["reference"] = {"response": _content("model", reference)}
    if response.agent_data is not None:
        # snake_case, as the SDK dumps its own AgentData for the function.
        found["agent_data"] = response.agent_data.model_dump(
            mode="json", exclude_none=True, by_alias=False
        )
    if answer := final_text(response):
        found["response"] = _content("model", answer)
    return found


def local_spec(name: str, function: CodeFunction) -> MetricSpec:
    """A local code metric as a metric of the engine, scored by ``evaluate_request`` as every
    other metric is: the user's function called on the SDK's instance of each candidate (a code
    execution spec's source is the other code metric: ``code_execution``, the service's
    instance, run by the judges' code runner)."""
    return MetricSpec(name, {"function": function}, scorer=_score_local)


def _score_local(spec: MetricSpec, subject: Subject, judges: Judges) -> CandidateResult:
    response = subject.candidate
    given = instance(subject.case_id, subject.request, response)
    return score(spec.name, spec.params["function"], response.candidate or "", given)


def read_result(result: Any) -> tuple[float, str | None]:
    """The score and explanation of what ``evaluate`` returned (a number, or ``{"score": ...,
    "explanation": ...}``); ValueError saying what it was otherwise."""
    explanation = None
    if isinstance(result, dict) and "score" in result:
        value, explanation = result["score"], result.get("explanation")
    else:
        value = result
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"evaluate returned {value!r}: expected a number or {{'score': ...}}")
    return float(value), None if explanation is None else str(explanation)


def score(
    name: str, function: CodeFunction, candidate: str, given: Mapping[str, Any]
) -> CandidateResult:
    """``function``'s result for one instance, as the engine's CandidateResult."""
    try:
        result = function(dict(given))
    except Exception as exc:  # the user's code: its failure is this case's, not the run's
        last = str(exc).strip().splitlines()[-1:] or [""]
        return _not_evaluated(name, candidate, f"{type(exc).__name__}: {last[0]}")
    try:
        value, explanation = read_result(result)
    except ValueError as exc:
        return _not_evaluated(name, candidate, str(exc))
    return CandidateResult(candidate=candidate, metric=name, score=value, explanation=explanation)


def _not_evaluated(name: str, candidate: str, why: str) -> CandidateResult:
    return CandidateResult(candidate=candidate, metric=name, explanation=f"not evaluated: {why}")
