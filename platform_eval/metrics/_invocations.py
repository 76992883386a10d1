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


# The same walk over a stored request's camelCase JSON: the emulator's run reads each item as
# the store keeps it (checked when it was written) and scores it with no model built, unless a
# metric asks for one. tests/metrics/test_stored_requests.py holds the two walks equal.


def _wire_text(parts: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(p["text"] for p in parts if p.get("text") and not p.get("thought"))


def _wire_calls(parts: Sequence[Mapping[str, Any]]) -> list[ToolCall]:
    return [
        _new_tuple(ToolCall, (call.get("name") or "", call.get("args") or {}))
        for p in parts
        if (call := p.get("functionCall")) is not None
    ]


def _wire_is_user(event: Mapping[str, Any]) -> bool:
    author = event.get("author")
    if author is not None:
        return bool(author == "user")
    content = event.get("content")
    return content is not None and content.get("role") == "user"


def _wire_turn_invocation(events: Sequence[Mapping[str, Any]]) -> Invocation:
    user_texts: list[str] = []
    calls: list[ToolCall] = []
    final_text = ""
    for event in events:
        content = event.get("content")
        if not content:
            continue
        parts = content.get("parts")
        if not parts:
            continue
        from_user = _wire_is_user(event)
        if len(parts) == 1:
            part = parts[0]
            text: str | None = None if part.get("thought") else part.get("text")
            call = None if from_user else part.get("functionCall")
            if call is not None:
                calls.append(_new_tuple(ToolCall, (call.get("name") or "", call.get("args") or {})))
        else:
            has_text = any(p.get("text") is not None and not p.get("thought") for p in parts)
            text = _wire_text(parts) if has_text else None
            if not from_user:
                calls.extend(_wire_calls(parts))
        if text is not None:
            if not from_user:
                final_text = text
            elif text:
                user_texts.append(text)
    return _new_tuple(Invocation, ("\n".join(user_texts), tuple(calls), final_text))


def _wire_agent_data_invocations(turns: Sequence[Mapping[str, Any]]) -> list[Invocation]:
    invocations = [_wire_turn_invocation(turn.get("events") or ()) for turn in turns]
    indexes = [turn.get("turnIndex") or 0 for turn in turns]
    if indexes == sorted(indexes):
        return invocations
    order = sorted(range(len(turns)), key=indexes.__getitem__)
    return [invocations[i] for i in order]


def stored_response_invocations(response: Mapping[str, Any]) -> list[Invocation]:
    """``response_invocations`` of a stored CandidateResponse's JSON."""
    turns = (response.get("agentData") or {}).get("turns")
    if turns:
        return _wire_agent_data_invocations(turns)
    events = response.get("events")
    if events:
        calls: list[ToolCall] = []
        last_text = ""
        for content in events:
            parts = content.get("parts") or ()
            calls.extend(_wire_calls(parts))
            text = _wire_text(parts)
            if text and content.get("role") != "user":
                last_text = text
        return [Invocation(tool_calls=tuple(calls), final_text=response.get("text") or last_text)]
    if response.get("text") is not None:
        return [Invocation(final_text=response["text"])]
    if response.get("value") is not None:
        return [Invocation(final_text=json.dumps(response["value"], sort_keys=True))]
    return []


def stored_context_turn_count(request: Mapping[str, Any]) -> int:
    """``context_turn_count`` of a stored request's JSON."""
    prompt = request.get("prompt") or {}
    turns = (prompt.get("agentData") or {}).get("turns") or []
    last_events = turns[-1].get("events") if turns else None
    if last_events and _wire_is_user(last_events[-1]):
        return len(turns) - 1
    return len(turns)


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


#: A response as a model, or as the store keeps it (camelCase JSON, checked when written).
AnyResponse = CandidateResponse | Mapping[str, Any]


def _turns_of(response: AnyResponse) -> list[Invocation]:
    if isinstance(response, CandidateResponse):
        return response_invocations(response)
    return stored_response_invocations(response)


def _final_text(response: AnyResponse, turns: list[Invocation]) -> str:
    text = response.text if isinstance(response, CandidateResponse) else response.get("text")
    if text is not None:
        return str(text)
    return turns[-1].final_text if turns else ""


def _golden_kind(golden: AnyResponse | None) -> str:
    if golden is None:
        return ""
    if isinstance(golden, CandidateResponse):
        has_turns = golden.agent_data is not None or bool(golden.events)
    else:
        has_turns = golden.get("agentData") is not None or bool(golden.get("events"))
    return "turns" if has_turns else "answer"


def final_text(response: CandidateResponse) -> str:
    """The final answer of a response: its text, else the last turn's final text."""
    return _final_text(response, response_invocations(response))


# Each read once, on first use, by a property that keeps it: functools.cached_property takes a
# lock on every first read in Python 3.11, and the engine reads these once per candidate.


class RequestTurns:
    """A request's golden turns and context, read once and shared by all its candidates.

    Built from the request's model, or from its stored JSON (``stored``): then the turns are
    read from the JSON, and the model is built only if a metric reads ``request``.
    """

    def __init__(
        self,
        request: EvaluationRequest | None = None,
        *,
        stored: Mapping[str, Any] | None = None,
    ) -> None:
        self._request = request
        self.stored = stored
        self._golden: AnyResponse | None
        if request is not None and stored is None:
            self._golden = request.golden_response
        elif stored is not None and request is None:
            self._golden = stored.get("goldenResponse")
        else:
            raise TypeError("RequestTurns takes a request or its stored JSON, one of the two")
        #: What the golden response holds: ``""`` (there is none), ``"answer"`` (a final
        #: answer only: text or value) or ``"turns"`` (agent data or events).
        self.golden = _golden_kind(self._golden)
        self._expected: list[Invocation] | None = None
        self._expected_final_text: str | None = None
        self._context: int | None = None

    @property
    def request(self) -> EvaluationRequest:
        if self._request is None:
            self._request = EvaluationRequest.from_wire(self.stored)
        return self._request

    @property
    def expected(self) -> list[Invocation]:
        if self._expected is None:
            self._expected = _turns_of(self._golden) if self._golden is not None else []
        return self._expected

    @property
    def expected_final_text(self) -> str:
        if self._expected_final_text is None:
            golden = self._golden
            self._expected_final_text = (
                _final_text(golden, self.expected) if golden is not None else ""
            )
        return self._expected_final_text

    @property
    def context(self) -> int:
        if self._context is None:
            self._context = (
                stored_context_turn_count(self.stored)
                if self.stored is not None
                else context_turn_count(self.request)
            )
        return self._context


class Subject:
    """One candidate of a request, its turns read once however many metrics score it.

    The candidate is its model, or its stored JSON when the request's turns were read from
    the store (``RequestTurns(stored=...)``): its model is then built only if a metric reads
    ``candidate``.
    """

    def __init__(
        self,
        request_turns: RequestTurns,
        candidate: AnyResponse,
        case_id: str = "",
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self.turns = request_turns
        self._response = candidate
        name = (
            candidate.candidate
            if isinstance(candidate, CandidateResponse)
            else candidate.get("candidate")
        )
        self.candidate_name = None if name is None else str(name)
        #: The eval case, for a judge's accounting and errors (empty when not known).
        self.case_id = case_id
        #: The item's metadata: an eval case's session input and golden final state.
        self.metadata: Mapping[str, Any] = metadata or {}
        # (actual, expected) turn pairs, or why they do not pair: the engine fills it.
        self.alignment: list[tuple[Invocation, Invocation]] | Exception | None = None
        #: Turn index -> why its tool calls differ from the golden ones, without argument
        #: rules (the trajectory metrics fill it).
        self.differences: dict[int, str] = {}
        self._actual: list[Invocation] | None = None
        self._final_text: str | None = None

    @property
    def request(self) -> EvaluationRequest:
        return self.turns.request

    @property
    def candidate(self) -> CandidateResponse:
        if not isinstance(self._response, CandidateResponse):
            self._response = CandidateResponse.from_wire(self._response)
        return self._response

    @property
    def actual(self) -> list[Invocation]:
        if self._actual is None:
            self._actual = _turns_of(self._response)
        return self._actual

    @property
    def final_text(self) -> str:
        if self._final_text is None:
            self._final_text = _final_text(self._response, self.actual)
        return self._final_text
