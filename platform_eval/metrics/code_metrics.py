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

from ..types import AgentData, CandidateResult, Content, Part

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
    case_id: str,
    prompt: str | None,
    golden: AgentData | str | None,
    candidate: AgentData | str | None,
    final_answer: Callable[[AgentData | str | None], str | None],
) -> dict[str, Any]:
    """The SDK's instance for one candidate of one case."""
    found: dict[str, Any] = {"eval_case_id": case_id}
    if prompt is not None:
        found["prompt"] = _content("user", prompt)
    reference = final_answer(golden)
    if reference is not None:
        found["reference"] = {"response": _content("model", reference)}
    if isinstance(candidate, AgentData):
        # snake_case, as the SDK dumps its own AgentData for the function.
        found["agent_data"] = candidate.model_dump(mode="json", exclude_none=True, by_alias=False)
    answer = final_answer(candidate)
    if answer is not None:
        found["response"] = _content("model", answer)
    return found


def score(
    name: str, function: CodeFunction, candidate: str, given: Mapping[str, Any]
) -> CandidateResult:
    """``function``'s result for one instance, as the engine's CandidateResult."""
    try:
        result = function(dict(given))
    except Exception as exc:  # the user's code: its failure is this case's, not the run's
        last = str(exc).strip().splitlines()[-1:] or [""]
        return _not_evaluated(name, candidate, f"{type(exc).__name__}: {last[0]}")
    explanation = None
    if isinstance(result, dict) and "score" in result:
        value, explanation = result["score"], result.get("explanation")
    else:
        value = result
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return _not_evaluated(
            name, candidate, f"evaluate returned {value!r}: expected a number or {{'score': ...}}"
        )
    return CandidateResult(
        candidate=candidate,
        metric=name,
        score=float(value),
        explanation=None if explanation is None else str(explanation),
    )


def _not_evaluated(name: str, candidate: str, why: str) -> CandidateResult:
    return CandidateResult(candidate=candidate, metric=name, explanation=f"not evaluated: {why}")
