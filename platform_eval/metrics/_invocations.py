"""Reads requests and responses as ADK-style invocations: per turn, tool calls and final text."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..types import AgentData, AgentEvent, CandidateResponse, Content, EvaluationRequest


# Named tuples, not frozen dataclasses: the engine builds one per turn and per call, and a
# frozen dataclass's __init__ costs several times a tuple's.
class ToolCall(NamedTuple):
    name: str
    args: dict[str, Any]


class Invocation(NamedTuple):
    """One turn: what the user said, the tool calls made, and the final text answer."""

    user_text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    final_text: str = ""


def content_text(content: Content | None) -> str:
    """Text parts joined by newlines, as ADK's final-response metrics read a Content."""
    if content is None or not content.parts:
        return ""
    return "\n".join(p.text for p in content.parts if p.text and not p.thought)


def _tool_calls(content: Content | None) -> list[ToolCall]:
    if content is None or not content.parts:
        return []
    return [
        ToolCall(name=p.function_call.name or "", args=p.function_call.args or {})
        for p in content.parts
        if p.function_call is not None
    ]


def _is_user(author: str | None, content: Content | None) -> bool:
    if author is not None:
        return author == "user"
    return content is not None and content.role == "user"


def agent_data_invocations(agent_data: AgentData) -> list[Invocation]:
    turns = agent_data.turns or []
    indexes = [turn.turn_index or 0 for turn in turns]
    if indexes != sorted(indexes):
        turns = sorted(turns, key=lambda turn: turn.turn_index or 0)
    return [_turn_invocation(turn.events or ()) for turn in turns]


def _turn_invocation(events: Sequence[AgentEvent]) -> Invocation:
    # One pass over each event's parts: this walk is most of the engine's time.
    user_texts: list[str] = []
    calls: list[ToolCall] = []
    final_text = ""
    for event in events:
        content = event.content
        if content is None:
            continue
        parts = content.parts
        if not parts:
            continue
        author = event.author  # _is_user, inlined: this loop runs once per event
        from_user = author == "user" if author is not None else content.role == "user"
        if len(parts) == 1:
            # Most events hold one part: read it directly, with no texts to join.
            part = parts[0]
            text: str | None = part.text if not part.thought else None
            call = None if from_user else part.function_call
            if call is not None:
                calls.append(ToolCall(call.name or "", call.args or {}))
        else:
            text = content_text(content)
            if not from_user:
                calls.extend(_tool_calls(content))
        if text:
            if from_user:
                user_texts.append(text)
            else:
                # The last agent text of the turn is its final response.
                final_text = text
    return Invocation(
        user_text="\n".join(user_texts), tool_calls=tuple(calls), final_text=final_text
    )


def events_invocations(events: list[Content], final_text: str | None) -> list[Invocation]:
    calls: list[ToolCall] = []
    last_text = ""
    for content in events:
        calls.extend(_tool_calls(content))
        text = content_text(content)
        if text and content.role != "user":
            last_text = text
    return [Invocation(tool_calls=tuple(calls), final_text=final_text or last_text)]


def response_invocations(response: CandidateResponse) -> list[Invocation]:
    """A response as invocations: AgentData turns, else events, else one turn of ``text``."""
    if response.agent_data is not None and response.agent_data.turns:
        return agent_data_invocations(response.agent_data)
    if response.events:
        return events_invocations(response.events, response.text)
    if response.text is not None:
        return [Invocation(final_text=response.text)]
    if response.value is not None:
        return [Invocation(final_text=json.dumps(response.value, sort_keys=True))]
    return []


def context_turn_count(request: EvaluationRequest) -> int:
    """Turns given as prior context in the prompt (multi-turn inference)."""
    prompt = request.prompt
    if prompt is None or prompt.agent_data is None:
        return 0
    turns = prompt.agent_data.turns or []
    # A last turn that ends with the user's message awaits the answer: it is not context.
    if (
        turns
        and turns[-1].events
        and _is_user(turns[-1].events[-1].author, turns[-1].events[-1].content)
    ):
        return len(turns) - 1
    return len(turns)


def _final_text(response: CandidateResponse, turns: list[Invocation]) -> str:
    if response.text is not None:
        return response.text
    return turns[-1].final_text if turns else ""


def final_text(response: CandidateResponse) -> str:
    """The final answer of a response: its text, else the last turn's final text."""
    return _final_text(response, response_invocations(response))


class RequestTurns:
    """A request's golden turns and context, read once and shared by all its candidates."""

    def __init__(self, request: EvaluationRequest) -> None:
        self.request = request

    @functools.cached_property
    def expected(self) -> list[Invocation]:
        golden = self.request.golden_response
        return response_invocations(golden) if golden is not None else []

    @functools.cached_property
    def expected_final_text(self) -> str:
        golden = self.request.golden_response
        return _final_text(golden, self.expected) if golden is not None else ""

    @functools.cached_property
    def context(self) -> int:
        return context_turn_count(self.request)


class Subject:
    """One candidate of a request, its turns read once however many metrics score it."""

    def __init__(self, request_turns: RequestTurns, candidate: CandidateResponse) -> None:
        self.turns = request_turns
        self.candidate = candidate
        # (actual, expected) turn pairs, or why they do not pair: the engine fills it.
        self.alignment: list[tuple[Invocation, Invocation]] | Exception | None = None

    @property
    def request(self) -> EvaluationRequest:
        return self.turns.request

    @functools.cached_property
    def actual(self) -> list[Invocation]:
        return response_invocations(self.candidate)

    @functools.cached_property
    def final_text(self) -> str:
        return _final_text(self.candidate, self.actual)
