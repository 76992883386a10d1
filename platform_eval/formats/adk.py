"""ADK EvalSet files (``*.evalset.json``) and their two older shapes (``*.test.json``).

The models mirror ``google.adk.evaluation`` (EvalSet, EvalCase, Invocation, ...) closely enough
that what we write back is accepted by ADK, and accept snake_case and camelCase at every level
(ADK itself takes camelCase below the top level only; other tools write it everywhere).
"""

from __future__ import annotations

import uuid
from typing import Any

from google.genai import types as genai_types
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic.alias_generators import to_camel

# google-genai's Content, with the common shapes built without its per-part validation (the
# same objects): parsing an eval set's conversations is most of converting it.
from ..types._base import Content


class AdkModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, extra="forbid"
    )

    def to_json_dict(self) -> dict[str, Any]:
        """snake_case JSON, as ADK writes its files."""
        return self.model_dump(mode="json", by_alias=False, exclude_none=True)


class RubricContent(AdkModel):
    text_property: str | None = None


class AdkRubric(AdkModel):
    rubric_id: str
    rubric_content: RubricContent
    description: str | None = None
    type: str | None = None


class IntermediateData(AdkModel):
    tool_uses: list[genai_types.FunctionCall] = Field(default_factory=list)
    tool_responses: list[genai_types.FunctionResponse] = Field(default_factory=list)
    intermediate_responses: list[tuple[str, list[genai_types.Part]]] = Field(default_factory=list)


class InvocationEvent(AdkModel):
    # ADK ignores UI-only fields the web editor adds to events.
    model_config = ConfigDict(extra="ignore")

    author: str
    content: Content | None = None
    grounding_metadata: dict[str, Any] | None = None
    usage_metadata: dict[str, Any] | None = None
    model_version: str | None = None


class InvocationEvents(AdkModel):
    invocation_events: list[InvocationEvent] = Field(default_factory=list)


class Invocation(AdkModel):
    invocation_id: str = ""
    user_content: Content
    final_response: Content | None = None
    intermediate_data: IntermediateData | InvocationEvents | None = None
    creation_timestamp: float = 0.0
    duration: float | None = None
    model_duration: float | None = None
    tool_duration: float | None = None
    rubrics: list[AdkRubric] | None = None
    app_details: dict[str, Any] | None = None

    def tool_calls(self) -> list[genai_types.FunctionCall]:
        data = self.intermediate_data
        if isinstance(data, IntermediateData):
            return list(data.tool_uses)
        if isinstance(data, InvocationEvents):
            return [
                part.function_call
                for event in data.invocation_events
                if event.content and event.content.parts
                for part in event.content.parts
                if part.function_call
            ]
        return []


class SessionInput(AdkModel):
    model_config = ConfigDict(extra="allow")

    app_name: str
    user_id: str
    session_id: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)


class ConversationScenario(AdkModel):
    model_config = ConfigDict(extra="allow")

    starting_prompt: str
    conversation_plan: str


class EvalCase(AdkModel):
    model_config = ConfigDict(extra="allow")

    eval_id: str
    conversation: list[Invocation] | None = None
    conversation_scenario: ConversationScenario | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0
    rubrics: list[AdkRubric] | None = None
    final_session_state: dict[str, Any] | None = None
    #: How many of the conversation's first invocations already happened: an EvaluationDataset
    #: case that continues a conversation ("N+1"), whose earlier turns are the session's history
    #: and are not asked again. Not a field of ADK's eval case: never written to a file.
    _history_turns: int = PrivateAttr(default=0)

    @property
    def history_turns(self) -> int:
        return self._history_turns

    def continuing(self, history_turns: int) -> EvalCase:
        """This case, its first ``history_turns`` invocations the history it continues."""
        copied = self.model_copy()
        copied._history_turns = history_turns
        return copied

    @model_validator(mode="after")
    def _conversation_xor_scenario(self) -> EvalCase:
        if (self.conversation is None) == (self.conversation_scenario is None):
            raise ValueError(
                "an eval case has exactly one of `conversation` and `conversation_scenario`"
            )
        return self


class EvalSet(AdkModel):
    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase]
    creation_timestamp: float = 0.0


# -- the older shapes -------------------------------------------------------------------------


class LegacyToolUse(AdkModel):
    tool_name: str
    tool_input: dict[str, Any] = Field(default_factory=dict)


class LegacyIntermediateResponse(AdkModel):
    author: str
    text: str


class LegacyRow(AdkModel):
    """One row of a ``*.test.json`` list: a query and what the agent should do."""

    query: str
    expected_tool_use: list[LegacyToolUse] = Field(default_factory=list)
    expected_intermediate_agent_responses: list[LegacyIntermediateResponse] = Field(
        default_factory=list
    )
    reference: str = ""


class LegacyCase(AdkModel):
    """An element of the older ``[{name, data, initial_session}]`` eval set list."""

    name: str
    data: list[LegacyRow]
    initial_session: dict[str, Any] = Field(default_factory=dict)
    # Some files in the wild (adk-samples' brand-search-optimization) spell it this way.
    initial_state: dict[str, Any] | None = None


def _invocation_from_row(row: LegacyRow, index: int) -> Invocation:
    # As ADK's own converter does, with a stable id instead of a random one.
    return Invocation(
        invocation_id=f"inv-{index + 1}",
        user_content=genai_types.Content(role="user", parts=[genai_types.Part(text=row.query)]),
        final_response=genai_types.Content(
            role="model", parts=[genai_types.Part(text=row.reference)]
        ),
        intermediate_data=IntermediateData(
            tool_uses=[
                genai_types.FunctionCall(name=use.tool_name, args=use.tool_input)
                for use in row.expected_tool_use
            ],
            intermediate_responses=[
                (resp.author, [genai_types.Part(text=resp.text)])
                for resp in row.expected_intermediate_agent_responses
            ],
        ),
    )


def eval_set_from_legacy(cases: list[LegacyCase], eval_set_id: str | None = None) -> EvalSet:
    converted = []
    for case in cases:
        session = dict(case.initial_session)
        if case.initial_state and not session:
            session = {"state": case.initial_state}
        converted.append(
            EvalCase(
                eval_id=case.name,
                conversation=[_invocation_from_row(r, i) for i, r in enumerate(case.data)],
                session_input=SessionInput(
                    app_name=session.get("app_name", ""),
                    user_id=session.get("user_id", ""),
                    state=session.get("state", {}),
                )
                if session
                else None,
            )
        )
    set_id = eval_set_id or str(uuid.uuid4())
    return EvalSet(eval_set_id=set_id, name=set_id, eval_cases=converted)
