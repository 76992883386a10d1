"""Agent Platform EvaluationDataset files (``*-dataset.json``), as agents-cli writes them.

Like ADK's files they are snake_case and also accept camelCase, so they share its model base.
"""

from __future__ import annotations

from typing import Any

from google.genai import types as genai_types
from pydantic import model_validator

from ..types import AgentData, RubricGroup
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

    @model_validator(mode="after")
    def _prompt_or_agent_data(self) -> DatasetCase:
        if self.prompt is not None and self.agent_data is not None:
            raise ValueError("a case has a prompt or agent_data, never both")
        if self.prompt is None and self.agent_data is None and self.user_scenario is None:
            raise ValueError(
                "a case needs a prompt (single turn) or agent_data (continued conversation)"
            )
        if self.agent_data is not None:
            last = _last_event(self.agent_data)
            if last is None or last.author != "user":
                raise ValueError("the last event of agent_data must be the user message to answer")
        return self


def _last_event(agent_data: AgentData) -> Any:
    for turn in reversed(agent_data.turns or []):
        if turn.events:
            return turn.events[-1]
    return None


class EvaluationDataset(AdkModel):
    eval_cases: list[DatasetCase]
