"""The result of reading a trace: one conversation as AgentData, with where it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..types import AgentData


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
