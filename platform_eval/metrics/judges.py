"""Judges decide rubrics. A rubric no configured judge can decide gets no verdict, never a pass.

``LocalJudge`` decides rubrics a program can check, chosen by the rubric ``type``; the rubric's
description holds the check's parameters, as a JSON object or as the main parameter alone:

=====================  ==============================================================
type                   description
=====================  ==============================================================
TOOL_CALLED            ``"get_weather"`` or ``{"tool": "get_weather", "args": {...}}``
TOOL_NOT_CALLED        ``"delete_account"`` or ``{"tool": ..., "args": {...}}``
TEXT_CONTAINS          ``"refund"`` or ``{"text": "Refund", "case_sensitive": true}``
TEXT_NOT_CONTAINS      same as TEXT_CONTAINS
REGEX                  ``"\\$\\d+\\.\\d{2}"`` or ``{"pattern": ..., "flags": "i"}``
JSON_PATH_EQUALS       ``{"path": "$.order.status", "equals": "shipped"}`` on the answer
RESPONSE_LENGTH        ``{"max_chars": 200}``, ``{"max_words": 50, "min_words": 3}``
=====================  ==============================================================

Rubrics no program can check go to the model judge (``metrics.model_rubrics``). What judges a
run is one typed value, ``Judges``: the program judges, and at most one model judge, which every
model call of the engine goes through.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..types import CandidateResponse, EvaluationRequest, Rubric, RubricVerdict
from ._invocations import Invocation, response_invocations
from .model_judge import ModelJudge

LOCAL_TYPES = (
    "TOOL_CALLED",
    "TOOL_NOT_CALLED",
    "TEXT_CONTAINS",
    "TEXT_NOT_CONTAINS",
    "REGEX",
    "JSON_PATH_EQUALS",
    "RESPONSE_LENGTH",
)


class JudgeError(Exception):
    """A judge could not reach a decision (bad rubric parameters, model failure)."""


@dataclass(frozen=True)
class JudgeInput:
    metric: str
    request: EvaluationRequest
    candidate: CandidateResponse
    #: The eval case, for a model judge's accounting and errors.
    case: str = ""

    @functools.cached_property
    def turns(self) -> list[Invocation]:
        # Read once: a judge checks several rubrics against the same turns.
        return response_invocations(self.candidate)

    @functools.cached_property
    def final_text(self) -> str:
        if self.candidate.text is not None:
            return self.candidate.text
        return self.turns[-1].final_text if self.turns else ""


class RubricJudge(Protocol):
    """A judge that decides rubrics by program, without a model."""

    name: str

    def can_decide(self, rubric: Rubric) -> bool: ...

    def decide(self, rubrics: Sequence[Rubric], subject: JudgeInput) -> list[RubricVerdict]: ...


def _parameters(rubric: Rubric, main: str) -> dict[str, Any]:
    description = (rubric.description or "").strip()
    if description.startswith("{"):
        try:
            value = json.loads(description)
        except ValueError as exc:
            raise JudgeError(
                f"rubric {rubric.rubric_id}: description is not valid JSON ({exc})"
            ) from None
        if not isinstance(value, dict):
            raise JudgeError(f"rubric {rubric.rubric_id}: expected a JSON object of parameters")
        return value
    if not description:
        raise JudgeError(
            f"rubric {rubric.rubric_id}: {rubric.type} needs a {main!r} in its description"
        )
    return {main: description}


def _json_path(document: Any, path: str) -> Any:
    if not path.startswith("$"):
        raise JudgeError(f"JSON path {path!r} must start with $")
    current = document
    for key, index in re.findall(r"\.([^.\[\]]+)|\[(\d+)\]", path[1:]):
        if key:
            if not isinstance(current, dict) or key not in current:
                raise KeyError(path)
            current = current[key]
        else:
            if not isinstance(current, list) or int(index) >= len(current):
                raise KeyError(path)
            current = current[int(index)]
    return current


class LocalJudge:
    """Decides the rubric types a program can check (see the module docstring)."""

    name = "local"

    def can_decide(self, rubric: Rubric) -> bool:
        return (rubric.type or "").upper() in LOCAL_TYPES

    def decide(self, rubrics: Sequence[Rubric], subject: JudgeInput) -> list[RubricVerdict]:
        return [self._one(rubric, subject) for rubric in rubrics]

    def _one(self, rubric: Rubric, subject: JudgeInput) -> RubricVerdict:
        kind = (rubric.type or "").upper()
        verdict, reasoning = getattr(self, f"_{kind.lower()}")(rubric, subject)
        return RubricVerdict(evaluated_rubric=rubric, verdict=verdict, reasoning=reasoning)

    def _calls(self, rubric: Rubric, subject: JudgeInput) -> tuple[str, list[dict[str, Any]], bool]:
        params = _parameters(rubric, "tool")
        tool = str(params.get("tool") or "")
        if not tool:
            raise JudgeError(f"rubric {rubric.rubric_id}: needs a tool name")
        wanted = params.get("args")
        calls = [c for turn in subject.turns for c in turn.tool_calls if c.name == tool]
        if wanted is not None:
            if not isinstance(wanted, dict):
                raise JudgeError(f"rubric {rubric.rubric_id}: args must be an object")
            calls_with = [c for c in calls if all(c.args.get(k) == v for k, v in wanted.items())]
            return tool, [c.args for c in calls], bool(calls_with)
        return tool, [c.args for c in calls], bool(calls)

    def _tool_called(self, rubric: Rubric, subject: JudgeInput) -> tuple[bool, str]:
        tool, seen, ok = self._calls(rubric, subject)
        if ok:
            return True, f"{tool} was called ({len(seen)} times)"
        if seen:
            return False, f"{tool} was called, but not with the expected arguments: {seen}"
        return False, f"{tool} was not called"

    def _tool_not_called(self, rubric: Rubric, subject: JudgeInput) -> tuple[bool, str]:
        tool, seen, matched = self._calls(rubric, subject)
        if matched:
            return False, f"{tool} was called: {seen}"
        return True, f"{tool} was not called" + (" with those arguments" if seen else "")

    def _contains(self, rubric: Rubric, subject: JudgeInput) -> tuple[bool, str]:
        params = _parameters(rubric, "text")
        needle = str(params.get("text") or "")
        haystack = subject.final_text
        if not params.get("case_sensitive", False):
            needle, haystack = needle.casefold(), haystack.casefold()
        found = needle in haystack
        return (
            found,
            f"the final response {'contains' if found else 'does not contain'} "
            f"{params.get('text')!r}",
        )

    def _text_contains(self, rubric: Rubric, subject: JudgeInput) -> tuple[bool, str]:
        return self._contains(rubric, subject)

    def _text_not_contains(self, rubric: Rubric, subject: JudgeInput) -> tuple[bool, str]:
        found, reasoning = self._contains(rubric, subject)
        return not found, reasoning

    def _regex(self, rubric: Rubric, subject: JudgeInput) -> tuple[bool, str]:
        params = _parameters(rubric, "pattern")
        flags = re.IGNORECASE if "i" in str(params.get("flags", "")) else 0
        try:
            match = re.search(str(params.get("pattern")), subject.final_text, flags)
        except re.error as exc:
            raise JudgeError(f"rubric {rubric.rubric_id}: invalid regex ({exc})") from None
        if match:
            return True, f"the final response matches at {match.group(0)!r}"
        return False, "the final response does not match the pattern"

    def _json_path_equals(self, rubric: Rubric, subject: JudgeInput) -> tuple[bool, str]:
        params = _parameters(rubric, "path")
        if "equals" not in params:
            raise JudgeError(f"rubric {rubric.rubric_id}: JSON_PATH_EQUALS needs 'equals'")
        document: Any = subject.candidate.value
        if document is None:
            try:
                document = json.loads(subject.final_text)
            except ValueError:
                return False, "the final response is not JSON"
        try:
            found = _json_path(document, str(params["path"]))
        except KeyError:
            return False, f"{params['path']} is not in the response"
        ok = found == params["equals"]
        return ok, f"{params['path']} is {found!r}" + (
            "" if ok else f", expected {params['equals']!r}"
        )

    def _response_length(self, rubric: Rubric, subject: JudgeInput) -> tuple[bool, str]:
        params = _parameters(rubric, "max_chars")
        text = subject.final_text
        chars, words = len(text), len(text.split())
        limits = {
            "max_chars": chars <= int(params.get("max_chars", chars)),
            "min_chars": chars >= int(params.get("min_chars", 0)),
            "max_words": words <= int(params.get("max_words", words)),
            "min_words": words >= int(params.get("min_words", 0)),
        }
        broken = [name for name, ok in limits.items() if name in params and not ok]
        return not broken, f"{chars} characters, {words} words" + (
            f"; breaks {broken}" if broken else ""
        )


def _program_judges() -> tuple[RubricJudge, ...]:
    return (LocalJudge(),)


class CodeRunError(Exception):
    """The user's code failed, ran too long or used too much memory: the message says which."""


class CodeRunner(Protocol):
    """Runs a custom code metric's ``evaluate(instance)`` source, somewhere it cannot harm the
    process that asks: returns the score and the explanation, or raises CodeRunError."""

    def run(self, source: str, instance: dict[str, Any]) -> tuple[float, str | None]: ...


@dataclass(frozen=True)
class Judges:
    """What judges a run: the judges that decide rubrics by program, and at most one model judge.

    Every model call of the engine (ADK's criteria, the service's rubric metrics, custom LLM
    metrics) goes through ``model``, so that its cache, budget, accounting and concurrency
    always apply; without one, a metric that needs a model is not evaluated, saying so.
    """

    programs: tuple[RubricJudge, ...] = field(default_factory=_program_judges)
    model: ModelJudge | None = None
    #: Runs custom code metrics; only an emulator started with --allow-code-metrics has one.
    code: CodeRunner | None = None

    def model_for(self, params: Mapping[str, Any]) -> str | None:
        """The model a metric is judged by: its own (its ADK criterion's
        ``judge_model_options.judge_model``, else ``judge_model``), else the model judge's;
        None without a model judge. The one place this order is decided."""
        if self.model is None:
            return None
        criterion = params.get("criterion")
        options = criterion.get("judge_model_options") if isinstance(criterion, dict) else None
        own = options.get("judge_model") if isinstance(options, dict) else None
        own = own or params.get("judge_model")
        return str(own) if own else self.model.model

    def close(self) -> None:
        if self.model is not None:
            self.model.close()
