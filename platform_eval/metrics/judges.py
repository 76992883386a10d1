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

``GeminiJudge`` asks a Gemini model (google-genai, API key or ADC) for a verdict on each rubric,
with reasoning, and can write rubrics for a metric when the request has none.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ..types import CandidateResponse, EvaluationRequest, Rubric, RubricVerdict
from ._invocations import Invocation, content_text, response_invocations
from .model_judge import CallLabel, JudgeUnavailableError

T = TypeVar("T")

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


class Judge(Protocol):
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


_VERDICT_SCHEMA = {
    "type": "OBJECT",
    "properties": {
        "verdicts": {
            "type": "ARRAY",
            "items": {
                "type": "OBJECT",
                "properties": {
                    "rubric_id": {"type": "STRING"},
                    "rubric": {"type": "STRING"},
                    "verdict": {"type": "BOOLEAN"},
                    "reasoning": {"type": "STRING"},
                },
                "required": ["rubric_id", "verdict", "reasoning"],
            },
        }
    },
    "required": ["verdicts"],
}


_SCORE_SCHEMA = {
    "type": "OBJECT",
    "properties": {"score": {"type": "NUMBER"}, "explanation": {"type": "STRING"}},
    "required": ["score", "explanation"],
}


def _transcript(subject: JudgeInput) -> str:
    lines: list[str] = []
    prompt = subject.request.prompt
    if prompt is not None and prompt.text:
        lines.append(f"USER PROMPT: {prompt.text}")
    agent_data = subject.candidate.agent_data
    for turn in (agent_data.turns or []) if agent_data else []:
        for event in turn.events or []:
            content = event.content
            if content is None:
                continue
            for part in content.parts or []:
                if part.function_call:
                    lines.append(
                        f"{event.author} CALLS {part.function_call.name}"
                        f"({json.dumps(part.function_call.args or {})})"
                    )
                elif part.function_response:
                    lines.append(
                        f"TOOL {part.function_response.name} RETURNS "
                        f"{json.dumps(part.function_response.response)[:2000]}"
                    )
            text = content_text(content)
            if text:
                lines.append(f"{event.author}: {text}")
    if agent_data is None:
        lines.append(f"RESPONSE: {subject.final_text}")
    return "\n".join(lines)


class GeminiJudge:
    """Grades rubrics with a Gemini model through google-genai.

    ``client`` is a ``google.genai.Client`` (built from ``GOOGLE_API_KEY`` / ADC when omitted).
    """

    name = "gemini"

    def __init__(
        self, model: str = "gemini-2.5-flash", *, client: Any = None, judging: Any = None
    ) -> None:
        self.model = model
        self._client = client
        #: A ModelJudge (platform_eval.judges.Judging) to ask through: its replay cache, token
        #: accounting and concurrency then apply; without one, google-genai is asked directly.
        self._judging = judging

    def _genai(self) -> Any:
        if self._client is None:
            from google import genai

            self._client = genai.Client()
        return self._client

    def can_decide(self, rubric: Rubric) -> bool:
        return (rubric.type or "").upper() not in LOCAL_TYPES

    def prompt(self, rubrics: Sequence[Rubric], subject: JudgeInput) -> str:
        if rubrics:
            listed = "\n".join(f"- [{r.rubric_id}] {r.description}" for r in rubrics)
            task = (
                "Decide, for each rubric below, whether the agent's conversation satisfies it.\n"
                f"{listed}"
            )
        else:
            task = (
                f"Write 3 to 6 specific, checkable rubrics that a good answer for the metric "
                f"{subject.metric!r} must satisfy, then decide each one "
                "(give each an id and its text)."
            )
        return (
            "You are an impartial evaluator of an AI agent.\n"
            f"{task}\n"
            'Answer with JSON: {"verdicts": [{"rubric_id", "rubric", '
            '"verdict" (true when satisfied), '
            '"reasoning" (one or two sentences citing the conversation)}]}.\n\n'
            f"CONVERSATION:\n{_transcript(subject)}"
        )

    def _ask(
        self,
        contents: str,
        schema: dict[str, Any],
        read: Callable[[Any], T],
        system_instruction: str | None = None,
        label: CallLabel | None = None,
    ) -> T:
        """The model's JSON answer to ``contents``, read by ``read``; any failure of the call
        or of the reading is a JudgeError."""
        from google.genai import types as genai_types

        config = genai_types.GenerateContentConfig(
            temperature=0.0,
            system_instruction=system_instruction,
            response_mime_type="application/json",
            response_schema=schema,
        )
        try:
            if self._judging is not None:
                asked = [genai_types.Content(role="user", parts=[genai_types.Part(text=contents)])]
                reply = self._judging.run(
                    self._judging.generate(
                        self.model, asked, config, sample=0, label=label or CallLabel("", "", "")
                    )
                )
                text = reply.text
            else:
                response = self._genai().models.generate_content(
                    model=self.model, contents=contents, config=config
                )
                text = response.text
            return read(json.loads(text or ""))
        except JudgeError:
            raise
        except JudgeUnavailableError as exc:
            raise JudgeError(str(exc)) from None
        except Exception as exc:
            raise JudgeError(f"the Gemini judge failed: {type(exc).__name__}: {exc}") from None

    def decide(self, rubrics: Sequence[Rubric], subject: JudgeInput) -> list[RubricVerdict]:
        label = CallLabel(subject.metric, subject.case, subject.candidate.candidate or "")
        entries = self._ask(
            self.prompt(rubrics, subject),
            _VERDICT_SCHEMA,
            lambda data: data["verdicts"],
            None,
            label,
        )
        by_id = {r.rubric_id: r for r in rubrics}
        verdicts = []
        for entry in entries:
            rubric = by_id.get(entry.get("rubric_id"))
            if rubric is None:
                if rubrics:
                    continue  # a verdict for a rubric we did not ask about
                rubric = Rubric.of(
                    str(entry.get("rubric") or ""), rubric_id=str(entry.get("rubric_id"))
                )
            verdicts.append(
                RubricVerdict(
                    evaluated_rubric=rubric,
                    verdict=bool(entry.get("verdict")),
                    reasoning=str(entry.get("reasoning") or ""),
                )
            )
        return verdicts

    def grade(
        self, prompt: str, system_instruction: str | None, label: CallLabel | None = None
    ) -> tuple[float, str]:
        """Scores a custom LLM metric's filled prompt: (score, explanation)."""
        asked = (
            f"{prompt}\n\n"
            'Answer with JSON: {"score": the score asked for above, as a number, '
            '"explanation": why, in one or two sentences}.'
        )
        value, explanation = self._ask(
            asked,
            _SCORE_SCHEMA,
            lambda data: (float(data["score"]), str(data.get("explanation") or "")),
            system_instruction,
            label,
        )
        if not math.isfinite(value):
            raise JudgeError(f"the Gemini judge answered a score that is not a number: {value}")
        return value, explanation


#: Set to a Gemini model name (with GOOGLE_API_KEY or ADC available) to grade free-text rubrics
#: and custom LLM metrics.
JUDGE_MODEL_ENV = "PLATFORM_EVAL_JUDGE_MODEL"


def default_judges() -> tuple[Judge, ...]:
    """The local judge, plus a Gemini judge when ``PLATFORM_EVAL_JUDGE_MODEL`` names a model."""
    model = os.environ.get(JUDGE_MODEL_ENV, "").strip()
    return (LocalJudge(), GeminiJudge(model)) if model else (LocalJudge(),)
