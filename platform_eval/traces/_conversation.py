"""The result of reading a trace: one conversation as AgentData, with where it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..types import (
    CANDIDATE_GROUNDING_KEY,
    CANDIDATE_STATE_KEY,
    CANDIDATE_TURN_AGENTS_KEY,
    AgentData,
)


@dataclass
class Conversation:
    """One recorded conversation of an agent, ready to be a candidate response."""

    id: str
    agent_data: AgentData
    source: str | None = None
    #: The session the recording says the conversation was, where its id is not that session's
    #: alone (a one-trace session of spans is ``<session id>/<trace id>``): it names the eval
    #: case as the session id would (``run --agent`` names each session after its case).
    session_id: str | None = None
    notes: list[str] = field(default_factory=list)
    #: The grounding metadata of events that had it (AgentEvent has no field for it): turn id
    #: -> the event's index in its turn -> the metadata, as the session recorded it.
    grounding: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: What the session started from, where the recording says: ``app_name``, ``user_id`` and
    #: ``state`` (an ADK session's state without the keys the run itself set). None: unknown.
    session_input: dict[str, Any] | None = None
    #: The state keys at the session's end that its own events set: not part of the state it
    #: started from (their earlier values are not recorded).
    state_set_by_run: list[str] = field(default_factory=list)
    #: The session's state at its end, where the recording holds it (an ADK session's
    #: ``state``, an empty one included); None where it does not (spans never do).
    final_state: dict[str, Any] | None = None
    #: What an agent was given in a turn, where it differs from its first turn's (AgentData's
    #: ``agents``): turn id -> agent id -> AgentConfig in wire form.
    turn_agents: dict[str, dict[str, Any]] = field(default_factory=dict)

    def records(self) -> dict[str, Any]:
        """What the recording holds of this candidate beside its AgentData, by the item
        metadata key that keeps it (``CANDIDATE_GROUNDING_KEY``, ``CANDIDATE_STATE_KEY``)."""
        kept: dict[str, Any] = {}
        if self.grounding:
            kept[CANDIDATE_GROUNDING_KEY] = self.grounding
        if self.final_state is not None:
            kept[CANDIDATE_STATE_KEY] = self.final_state
        if self.turn_agents:
            kept[CANDIDATE_TURN_AGENTS_KEY] = self.turn_agents
        return kept

    @property
    def first_user_message(self) -> str | None:
        for turn in self.agent_data.turns or []:
            for event in turn.events or []:
                if event.author == "user" and event.content and event.content.parts:
                    text = "\n".join(p.text for p in event.content.parts if p.text)
                    if text:
                        return text
        return None

    @property
    def tool_calls(self) -> list[str]:
        return [
            part.function_call.name or ""
            for turn in self.agent_data.turns or []
            for event in turn.events or []
            if event.content and event.content.parts
            for part in event.content.parts
            if part.function_call
        ]
