"""Agent Platform EvaluationDataset files (``*-dataset.json``), as agents-cli writes them.

Like ADK's files they are snake_case and also accept camelCase, so they share its model base.

A case is golden (what the agent should be asked: a ``prompt``, or ``agent_data`` whose turns end
with the user message to answer) or graded: agents-cli's trace files (``eval generate``) keep the
golden case and add what the agent did, its events appended to ``agent_data`` (a fresh turn for a
``prompt`` case) and its final text in ``responses``. ``candidate_agent_data`` is that answer.
"""

from __future__ import annotations

from typing import Any

from google.genai import types as genai_types
from pydantic import model_validator

from ..types import AgentData, AgentEvent, ConversationTurn, RubricGroup
from .adk import AdkModel


class ResponseCandidate(AdkModel):
    response: genai_types.Content | None = None


class DatasetCase(AdkModel):
    eval_case_id: str | None = None
    prompt: genai_types.Content | None = None
    agent_data: AgentData | None = None
    reference: ResponseCandidate | None = None
    responses: list[ResponseCandidate] | None = None
    rubric_groups: dict[str, RubricGroup] | None = None
    system_instruction: genai_types.Content | None = None
    conversation_history: list[dict[str, Any]] | None = None
    intermediate_events: list[dict[str, Any]] | None = None
    agent_info: dict[str, Any] | None = None
    user_scenario: dict[str, Any] | None = None

    @property
    def graded(self) -> bool:
        """The agent's answer is in the case (an agents-cli trace file's case)."""
        return self.responses is not None

    @model_validator(mode="after")
    def _prompt_or_agent_data(self) -> DatasetCase:
        if self.prompt is None and self.agent_data is None and self.user_scenario is None:
            raise ValueError(
                "a case needs a prompt (single turn) or agent_data (continued conversation)"
            )
        if self.graded:
            answered = self.prompt is not None or (
                self.agent_data is not None and _last_user(self.agent_data) is not None
            )
            if not answered:
                raise ValueError("agent_data has no user message the agent answered")
            return self
        if self.prompt is not None and self.agent_data is not None:
            raise ValueError("a case has a prompt or agent_data, never both")
        if self.agent_data is not None:
            last = _last_event(self.agent_data)
            if last is None or last.author != "user":
                raise ValueError("the last event of agent_data must be the user message to answer")
        return self

    def candidate_agent_data(self) -> AgentData | None:
        """What the agent did in a graded case, as a candidate's AgentData (the prompt first,
        as the user's event, for a ``prompt`` case); None for a golden case."""
        if not self.graded:
            return None
        data = self.agent_data
        if data is None or not data.turns:
            # Only the final answer was kept: the prompt and the first response.
            answer = (self.responses or [ResponseCandidate()])[0].response
            events = [_user_event(self.prompt)] if self.prompt is not None else []
            if answer is not None:
                events.append(AgentEvent(author="agent", content=answer))
            return AgentData(
                turns=[ConversationTurn(turn_index=0, turn_id="turn_0", events=events)]
            )
        if self.prompt is None:
            return data
        first, *rest = data.turns
        opened = first.model_copy(
            update={"events": [_user_event(self.prompt), *(first.events or [])]}
        )
        return data.model_copy(update={"turns": [opened, *rest]})


def _user_event(prompt: genai_types.Content | None) -> AgentEvent:
    return AgentEvent(author="user", content=prompt)


def last_user_content(agent_data: AgentData) -> genai_types.Content | None:
    """The content of the last user event (the message the agent answers last)."""
    event = _last_user(agent_data)
    return event.content if event is not None else None


def _last_user(agent_data: AgentData) -> Any:
    for turn in reversed(agent_data.turns or []):
        for event in reversed(turn.events or []):
            if event.author == "user":
                return event
    return None


def _last_event(agent_data: AgentData) -> Any:
    for turn in reversed(agent_data.turns or []):
        if turn.events:
            return turn.events[-1]
    return None


class EvaluationDataset(AdkModel):
    eval_cases: list[DatasetCase]
