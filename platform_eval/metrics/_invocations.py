"""Reads requests and responses as ADK-style invocations: per turn, tool calls and final text."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
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


# A named tuple's own __new__ is a Python function: the walk builds its tuples in C, with all
# their fields given in order.
_new_tuple = tuple.__new__


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
    invocations: list[Invocation] = []
    # One pass, the order checked on the way: turns out of order are rare, and sorted then.
    last_index = -1
    in_order = True
    for turn in turns:
        index = turn.turn_index or 0
        if index < last_index:
            in_order = False
        last_index = index
        invocations.append(_turn_invocation(turn.events or ()))
    if in_order:
        return invocations
    order = sorted(range(len(turns)), key=lambda i: turns[i].turn_index or 0)
    return [invocations[i] for i in order]


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
                calls.append(_new_tuple(ToolCall, (call.name or "", call.args or {})))
        else:
            has_text = any(p.text is not None and not p.thought for p in parts)
            text = content_text(content) if has_text else None
            if not from_user:
                calls.extend(_tool_calls(content))
        if text is not None:
            if not from_user:
                # The last agent text of the turn is its final response; an empty one says
                # the turn has none (an expected turn with intermediate responses only).
                final_text = text
            elif text:
                user_texts.append(text)
    return _new_tuple(Invocation, ("\n".join(user_texts), tuple(calls), final_text))


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


# Each read once, on first use, by a property that keeps it: functools.cached_property takes a
# lock on every first read in Python 3.11, and the engine reads these once per candidate.


class RequestTurns:
    """A request's golden turns and context, read once and shared by all its candidates."""

    def __init__(self, request: EvaluationRequest) -> None:
        self.request = request
        self._expected: list[Invocation] | None = None
        self._expected_final_text: str | None = None
        self._context: int | None = None

    @property
    def expected(self) -> list[Invocation]:
        if self._expected is None:
            golden = self.request.golden_response
            self._expected = response_invocations(golden) if golden is not None else []
        return self._expected

    @property
    def expected_final_text(self) -> str:
        if self._expected_final_text is None:
            golden = self.request.golden_response
            self._expected_final_text = (
                _final_text(golden, self.expected) if golden is not None else ""
            )
        return self._expected_final_text

    @property
    def context(self) -> int:
        if self._context is None:
            self._context = context_turn_count(self.request)
        return self._context


class Subject:
    """One candidate of a request, its turns read once however many metrics score it."""

    def __init__(
        self,
        request_turns: RequestTurns,
        candidate: CandidateResponse,
        case_id: str = "",
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self.turns = request_turns
        self.candidate = candidate
        #: The eval case, for a judge's accounting and errors (empty when not known).
        self.case_id = case_id
        #: The item's metadata: an eval case's session input and golden final state.
        self.metadata: Mapping[str, Any] = metadata or {}
        # (actual, expected) turn pairs, or why they do not pair: the engine fills it.
        self.alignment: list[tuple[Invocation, Invocation]] | Exception | None = None
        self._actual: list[Invocation] | None = None
        self._final_text: str | None = None

    @property
    def request(self) -> EvaluationRequest:
        return self.turns.request

    @property
    def actual(self) -> list[Invocation]:
        if self._actual is None:
            self._actual = response_invocations(self.candidate)
        return self._actual

    @property
    def final_text(self) -> str:
        if self._final_text is None:
            self._final_text = _final_text(self.candidate, self.actual)
        return self._final_text
