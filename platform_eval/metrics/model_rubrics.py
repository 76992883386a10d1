"""Rubric verdicts, written rubrics and custom-metric scores from the model judge.

The service's rubric metrics (``general_quality_v1``, ...) with free-text rubrics, and custom LLM
metrics, ask the model through the ``ModelJudge`` a run is handed, never a client of their own:
the replay cache, the call budget, the accounting and the concurrency apply to every call. The
model is the metric's own when its configuration names one (``Judges.model_for``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..types import Rubric, RubricVerdict
from ._invocations import content_text
from .judges import JudgeError, JudgeInput
from .model_judge import CallLabel, JudgeUnavailableError, ModelJudge

T = TypeVar("T")

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


#: Images, sounds and files of a conversation a judge is shown at most, and their bytes in all
#: (Gemini takes 20 MB of inline data a request); beyond, the transcript names them.
MAX_ATTACHMENTS = 16
MAX_ATTACHED_BYTES = 16 * 2**20


def attachments(subject: JudgeInput) -> list[Any]:
    """The media parts of the conversation (``inline_data``, ``file_data``) the judge is shown
    beside its transcript, in the order they were said, within the bounds above."""
    found: list[Any] = []
    size = 0
    agent_data = subject.candidate.agent_data
    for turn in (agent_data.turns or []) if agent_data else []:
        for event in turn.events or []:
            for part in (event.content.parts if event.content else None) or []:
                if not (part.inline_data or part.file_data):
                    continue
                weight = len(part.inline_data.data or b"") if part.inline_data else 0
                if len(found) >= MAX_ATTACHMENTS or size + weight > MAX_ATTACHED_BYTES:
                    return found
                found.append(part)
                size += weight
    return found


def _media_line(author: str | None, part: Any, shown: list[Any]) -> str:
    given = part.inline_data or part.file_data
    what = f"{given.mime_type or 'data'}" + (
        f" {given.display_name}" if getattr(given, "display_name", None) else ""
    )
    if any(part is other for other in shown):
        number = next(i for i, other in enumerate(shown, 1) if part is other)
        return f"{author} ATTACHES {what} (attachment {number}, given after this text)"
    return f"{author} ATTACHES {what} (not shown: beyond what a judge is given)"


def transcript(subject: JudgeInput) -> str:
    """The conversation as the judge reads it: the prompt, each call, result and message, and
    where an image, a sound or a file was attached (``attachments`` gives them)."""
    lines: list[str] = []
    shown = attachments(subject)
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
                elif part.inline_data or part.file_data:
                    lines.append(_media_line(event.author, part, shown))
            text = content_text(content)
            if text:
                lines.append(f"{event.author}: {text}")
    if agent_data is None:
        lines.append(f"RESPONSE: {subject.final_text}")
    return "\n".join(lines)


def verdict_prompt(
    rubrics: Sequence[Rubric],
    subject: JudgeInput,
    focus: str | None = None,
    reference: str | None = None,
) -> str:
    """What the judge is asked: a verdict on each rubric, or (none given) rubrics to write."""
    if rubrics:
        listed = "\n".join(f"- [{r.rubric_id}] {r.description}" for r in rubrics)
        task = (
            "Decide, for each rubric below, whether the agent's conversation satisfies it.\n"
            f"{listed}"
        )
    elif focus is not None:
        task = (
            f"The metric {subject.metric!r} checks {focus}. Write the specific, checkable "
            "rubrics it needs (at most 12), then decide each one (give each an id and its text)."
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
        f"CONVERSATION:\n{transcript(subject)}"
        + (f"\n\nREFERENCE ANSWER:\n{reference}" if reference is not None else "")
    )


def ask_json(
    judge: ModelJudge,
    model: str,
    contents: str,
    schema: dict[str, Any],
    read: Callable[[Any], T],
    system_instruction: str | None,
    label: CallLabel,
    media: Sequence[Any] = (),
) -> T:
    """The model's JSON answer to ``contents``, read by ``read``; any failure of the call or
    of the reading is a JudgeError."""
    from google.genai import types as genai_types

    config = genai_types.GenerateContentConfig(
        temperature=0.0,
        system_instruction=system_instruction,
        response_mime_type="application/json",
        response_schema=schema,
    )
    parts = [genai_types.Part(text=contents), *media]
    asked = [genai_types.Content(role="user", parts=parts)]
    while True:
        try:
            reply = judge.run(judge.generate(model, asked, config, sample=0, label=label))
        except JudgeUnavailableError as exc:
            raise JudgeError(str(exc)) from None
        try:
            return read(json.loads(reply.text or ""))
        except (ValueError, KeyError, TypeError) as exc:
            # Not given again; a replayed answer is asked afresh, once (it is forgotten).
            if judge.unusable(reply):
                continue
            raise JudgeError(
                f"the judge model {model} answered something that is not the JSON asked for "
                f"({type(exc).__name__}: {exc}); the answer is not kept, and a next run asks "
                "again"
            ) from None


def decide(
    judge: ModelJudge,
    model: str,
    rubrics: Sequence[Rubric],
    subject: JudgeInput,
    focus: str | None = None,
    reference: str | None = None,
) -> list[RubricVerdict]:
    """The model's verdict on each rubric; with no rubrics, the rubrics it wrote (about
    ``focus``, what the metric checks, when given), decided."""
    label = CallLabel(subject.metric, subject.case, subject.candidate.candidate or "")
    entries = ask_json(
        judge,
        model,
        verdict_prompt(rubrics, subject, focus, reference),
        _VERDICT_SCHEMA,
        lambda data: list(data["verdicts"]),
        None,
        label,
        media=attachments(subject),
    )
    by_id = {r.rubric_id: r for r in rubrics}
    verdicts = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise JudgeError(f"the judge model {model} answered a verdict that is not an object")
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
    judge: ModelJudge,
    model: str,
    prompt: str,
    system_instruction: str | None,
    label: CallLabel,
) -> tuple[float, str]:
    """A custom LLM metric's filled prompt, scored by the model: (score, explanation)."""
    asked = (
        f"{prompt}\n\n"
        'Answer with JSON: {"score": the score asked for above, as a number, '
        '"explanation": why, in one or two sentences}.'
    )
    value, explanation = ask_json(
        judge,
        model,
        asked,
        _SCORE_SCHEMA,
        lambda data: (float(data["score"]), str(data.get("explanation") or "")),
        system_instruction,
        label,
    )
    if not math.isfinite(value):
        raise JudgeError(f"the judge model {model} answered a score that is not a number: {value}")
    return value, explanation


#: The choices of a pairwise judgement, as the API's PairwiseChoice names them.
PAIRWISE_CHOICES = ("CANDIDATE", "BASELINE", "TIE")
_CHOICE_SCHEMA = {
    "type": "OBJECT",
    "properties": {
        "pairwise_choice": {"type": "STRING", "enum": list(PAIRWISE_CHOICES)},
        "explanation": {"type": "STRING"},
    },
    "required": ["pairwise_choice"],
}


def _choice(data: Any) -> tuple[str, str]:
    choice = str(data["pairwise_choice"]).strip().upper()
    if choice not in PAIRWISE_CHOICES:
        raise ValueError(f"pairwise_choice {choice!r} is not one of {PAIRWISE_CHOICES}")
    return choice, str(data.get("explanation") or "")


def choose(
    judge: ModelJudge,
    model: str,
    prompt: str,
    system_instruction: str | None,
    label: CallLabel,
) -> tuple[str, str]:
    """A pairwise metric's filled prompt, decided by the model: (CANDIDATE, BASELINE or TIE,
    explanation)."""
    asked = (
        f"{prompt}\n\n"
        'Answer with JSON: {"pairwise_choice": "CANDIDATE" when the candidate response is '
        'better, "BASELINE" when the baseline response is, "TIE" when neither, '
        '"explanation": why, in one or two sentences}.'
    )
    return ask_json(judge, model, asked, _CHOICE_SCHEMA, _choice, system_instruction, label)
