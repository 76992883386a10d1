"""ADK session exports (snake_case or camelCase, including pre-1.0 dumps) -> AgentData.

Events are grouped into turns by invocation id, in order of first appearance; authors, function
calls and responses (as parts), state deltas and timestamps are kept.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.genai import types as genai_types
from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from ..formats._problems import FormatError, Problem
from ..types import AgentConfig, AgentData, AgentEvent, ConversationTurn
from ._conversation import Conversation


def _get(data: dict[str, Any], snake: str) -> Any:
    """A key of an export written in snake_case or camelCase."""
    return data[snake] if snake in data else data.get(to_camel(snake))


def _content(raw: Any, where: str, file: str | None) -> genai_types.Content | None:
    if raw is None:
        return None
    try:
        return genai_types.Content.model_validate(raw)
    except ValidationError as exc:
        raise FormatError(
            [Problem(file, where, f"invalid content: {exc.errors()[0]['msg']}")]
        ) from None


def _time(value: Any) -> datetime | None:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    return None


def session_to_conversation(session: dict[str, Any], *, source: str | None = None) -> Conversation:
    """One ADK session as one conversation."""
    if not isinstance(session, dict) or not isinstance(session.get("events"), list):
        raise FormatError(
            [Problem(source, "$.events", "expected an ADK session with a list of events")]
        )
    turns: dict[str, list[AgentEvent]] = {}
    authors: list[str] = []
    notes: list[str] = []
    skipped_partial = 0
    for index, raw in enumerate(session["events"]):
        if not isinstance(raw, dict):
            raise FormatError([Problem(source, f"$.events[{index}]", "expected an event object")])
        if _get(raw, "partial") or (raw.get("options") or {}).get("partial"):
            skipped_partial += 1
            continue
        content = _content(raw.get("content"), f"$.events[{index}].content", source)
        actions = raw.get("actions") or {}
        state_delta = _get(actions, "state_delta") or None
        if content is None and not state_delta:
            continue
        author = raw.get("author") or "unknown"
        if author != "user" and author not in authors:
            authors.append(author)
        invocation = _get(raw, "invocation_id") or f"event-{index}"
        turns.setdefault(invocation, []).append(
            AgentEvent(
                author=author,
                content=content,
                event_time=_time(raw.get("timestamp")),
                state_delta=state_delta,
            )
        )
    if skipped_partial:
        notes.append(f"{skipped_partial} partial (streaming) events skipped")
    agent_data = AgentData(
        agents={a: AgentConfig(agent_id=a) for a in authors} or None,
        turns=[
            ConversationTurn(turn_index=i, turn_id=invocation_id, events=events)
            for i, (invocation_id, events) in enumerate(turns.items())
        ],
    )
    session_id = str(session.get("id") or source or "session")
    return Conversation(id=session_id, agent_data=agent_data, source=source, notes=notes)
