"""AgentData: the execution trace of a (multi-)agent conversation."""

from __future__ import annotations

from typing import Any

from ._base import Content, Timestamp, Tool, WireModel


class AgentConfig(WireModel):
    agent_id: str | None = None
    agent_type: str | None = None
    description: str | None = None
    instruction: str | None = None
    tools: list[Tool] | None = None
    sub_agents: list[str] | None = None


class AgentEvent(WireModel):
    author: str | None = None
    content: Content | None = None
    event_time: Timestamp | None = None
    state_delta: dict[str, Any] | None = None
    active_tools: list[Tool] | None = None


class ConversationTurn(WireModel):
    turn_index: int | None = None
    turn_id: str | None = None
    events: list[AgentEvent] | None = None


class AgentData(WireModel):
    agents: dict[str, AgentConfig] | None = None
    turns: list[ConversationTurn] | None = None
