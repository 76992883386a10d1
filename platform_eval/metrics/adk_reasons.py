"""What the judge said of each turn of an ADK judged criterion, kept for the report.

google-adk's evaluators read a label from each judge answer and drop the rest: the reasoning
``final_response_match_v2``'s judge writes before its verdict, the rationale
``hallucinations_v1``'s judge gives each sentence. A score with no reason is a number nobody can
check, so an evaluator built here keeps them: ``KeepsReasons`` is mixed into ADK's own class and
only watches its methods (their results are returned unchanged, and ADK computes the scores).
"""

from __future__ import annotations

import contextvars
import json
import re
from typing import Any

#: The judge answer the running sample read: set in ADK's parse, read when its sample returns
#: (each sample is its own asyncio task, so each has its own value).
_REPLY: contextvars.ContextVar[str | None] = contextvars.ContextVar("adk_judge_reply", default=None)

#: The longest reason shown per turn: a judge that writes pages is cut, saying so.
MAX_REASON_CHARS = 600

_REASONING_FIELD = re.compile(r'"reasoning"\s*:\s*"((?:[^"\\]|\\.)*)"', re.DOTALL)


class KeepsReasons:
    """Mixed in before an ADK evaluator class: keeps each judge answer beside the result ADK
    makes of it."""

    def _platform_eval_start(self) -> None:
        #: id of a per-turn sample result -> the judge answer it was read from.
        self._platform_eval_answers: dict[int, str] = {}
        #: hallucinations_v1: per turn, its steps' sentence verdicts (ADK's JSON of them).
        self._platform_eval_steps: list[list[str]] = []

    def convert_auto_rater_response_to_score(self, llm_response: Any) -> Any:
        parts = getattr(getattr(llm_response, "content", None), "parts", None) or []
        _REPLY.set("".join(getattr(p, "text", None) or "" for p in parts) or None)
        read = super().convert_auto_rater_response_to_score(llm_response)  # type: ignore[misc]
        # An answer ADK took no score from (no label, no verdict it could parse) is not
        # replayed: the judge is told, through the call that asked it (adk_judged._Call).
        call = getattr(self, "_platform_eval_call", None)
        if call is not None:
            call.read(llm_response, usable=getattr(read, "score", None) is not None)
        return read

    async def _evaluate_single_sample(self, llm_request: Any, actual: Any, expected: Any) -> Any:
        _REPLY.set(None)
        result = await super()._evaluate_single_sample(  # type: ignore[misc]
            llm_request, actual, expected
        )
        answer = _REPLY.get()
        if answer:
            self._platform_eval_answers[id(result)] = answer
        return result

    def _get_steps_to_evaluate(self, actual: Any) -> Any:
        # hallucinations_v1 reads the turns one after another, each's steps after it.
        self._platform_eval_steps.append([])
        return super()._get_steps_to_evaluate(actual)  # type: ignore[misc]

    async def _evaluate_nl_response(self, nl_response: str, context: str) -> Any:
        score, detail = await super()._evaluate_nl_response(  # type: ignore[misc]
            nl_response, context
        )
        if self._platform_eval_steps:
            self._platform_eval_steps[-1].append(detail)
        return score, detail

    def platform_eval_reasons(self, per_turn: list[Any]) -> list[str]:
        """What the judge said of each turn of ``per_turn`` (ADK's per-invocation results),
        "" where nothing was kept."""
        steps = self._platform_eval_steps
        if steps and len(steps) == len(per_turn):
            return [_sentences(details) for details in steps]
        return [_reasoning(self._platform_eval_answers.get(id(turn)) or "") for turn in per_turn]


def _reasoning(answer: str) -> str:
    """The reasoning a judge wrote in its answer (the JSON field ADK's prompt asks for), or
    the answer itself when it has none."""
    found = _REASONING_FIELD.search(answer)
    if found:
        try:
            return _cut(json.loads(f'"{found.group(1)}"'))
        except ValueError:
            return _cut(found.group(1))
    return _cut(answer)


def _sentences(details: list[str]) -> str:
    """hallucinations_v1's verdicts for one turn: the sentences not supported, each with the
    judge's rationale."""
    said: list[str] = []
    checked = 0
    for detail in details:
        try:
            verdicts = json.loads(detail)
        except ValueError:  # ADK's own words when a step failed ("No sentences produced ...")
            said.append(detail)
            continue
        for verdict in verdicts if isinstance(verdicts, list) else []:
            if not isinstance(verdict, dict):
                continue
            checked += 1
            label = str(verdict.get("label") or "").strip().lower()
            if label not in ("supported", "not_applicable"):
                rationale = str(verdict.get("rationale") or "").strip()
                sentence = str(verdict.get("sentence") or "").strip()
                said.append(
                    f'{label or "no label"}: "{sentence}"'
                    + (f" ({rationale})" if rationale else "")
                )
    if not said:
        return f"all {checked} sentences supported" if checked else ""
    return _cut("; ".join(said))


def _cut(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= MAX_REASON_CHARS:
        return text
    return text[: MAX_REASON_CHARS - 1].rstrip() + "…"
