"""ADK eval cases -> REQUEST evaluation items, with a report of what was carried and what not.

Mapping of one eval case:

* single turn: the user message is ``prompt.text``; multi-turn: ``prompt.agentData`` holds the
  earlier turns (as expected) and ends with the last user message, ready for inference;
* ``goldenResponse.agentData`` holds every turn as expected: the user message, the expected
  tool calls and responses, intermediate responses, and last the expected final answer. The
  trajectory metrics read it turn by turn, as ADK does;
* case rubrics become the rubric group ``eval_case``, an invocation's rubrics the group
  ``invocation_<n>``; ADK's ``{rubric_id, rubric_content.text_property, type}`` becomes
  ``{rubricId, content.property.description, type}``;
* ``conversation_scenario`` becomes ``prompt.userScenario``;
* labels record the eval set and case ids (sanitized to label syntax); ``metadata`` keeps them
  verbatim, with the session input and expected final state, which the service does not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from google.genai import types as genai_types

from ..types import (
    FINAL_SESSION_STATE_KEY,
    SESSION_INPUT_KEY,
    USER_PERSONA_KEY,
    AgentData,
    AgentEvent,
    CandidateResponse,
    ConversationTurn,
    EvaluationItem,
    EvaluationItemType,
    EvaluationPrompt,
    EvaluationRequest,
    Rubric,
    RubricContent,
    RubricContentProperty,
    RubricGroup,
    UserScenario,
)
from ..types._fast_content import construct
from . import adk
from ._problems import FormatError, Problem

CASE_RUBRIC_GROUP = "eval_case"
LABEL_EVAL_SET = "eval-set-id"
LABEL_EVAL_CASE = "eval-case-id"
DEFAULT_AGENT = "agent"


@dataclass
class CaseReport:
    eval_id: str
    carried: list[str] = field(default_factory=list)
    not_carried: list[str] = field(default_factory=list)


@dataclass
class ConversionReport:
    cases: list[CaseReport] = field(default_factory=list)

    @property
    def not_carried(self) -> dict[str, list[str]]:
        return {c.eval_id: c.not_carried for c in self.cases if c.not_carried}

    def summary(self) -> str:
        lines = [f"{len(self.cases)} eval cases converted"]
        for case in self.cases:
            for what in case.not_carried:
                lines.append(f"  {case.eval_id}: not carried: {what}")
        return "\n".join(lines)


def label_value(value: str) -> str:
    """A Google Cloud label value: lowercase letters, digits, ``_`` and ``-``, at most 63."""
    cleaned = re.sub(r"[^a-z0-9_-]", "-", value.lower())
    return cleaned[:63]


def _rubric(rubric: adk.AdkRubric, report: CaseReport, where: str) -> Rubric:
    if rubric.description:
        report.not_carried.append(
            f"{where} rubric {rubric.rubric_id!r} description (the API's Rubric has no such field)"
        )
    return Rubric(
        rubric_id=rubric.rubric_id,
        type=rubric.type,
        content=RubricContent(
            property=RubricContentProperty(description=rubric.rubric_content.text_property)
        ),
    )


def rubric_groups(
    eval_case: adk.EvalCase, report: CaseReport, *, titled: bool
) -> dict[str, RubricGroup] | None:
    """Case rubrics as the group ``eval_case``, each turn's as ``invocation_<n>``."""
    groups: dict[str, RubricGroup] = {}
    if eval_case.rubrics:
        groups[CASE_RUBRIC_GROUP] = RubricGroup(
            group_id=CASE_RUBRIC_GROUP,
            display_name="Eval case rubrics" if titled else None,
            rubrics=[_rubric(r, report, "case") for r in eval_case.rubrics],
        )
        report.carried.append(f"{len(eval_case.rubrics)} case rubrics")
    for index, invocation in enumerate(eval_case.conversation or []):
        if invocation.rubrics:
            key = f"invocation_{index}"
            groups[key] = RubricGroup(
                group_id=key,
                display_name=f"Rubrics of turn {index}" if titled else None,
                rubrics=[_rubric(r, report, f"turn {index}") for r in invocation.rubrics],
            )
            report.carried.append(f"{len(invocation.rubrics)} rubrics of turn {index}")
    return groups or None


def user_event(invocation: adk.Invocation) -> AgentEvent:
    content = invocation.user_content
    if content.role is None:
        content = content.model_copy(update={"role": "user"})
    return AgentEvent(author="user", content=content)


def _content(role: str, parts: list[genai_types.Part]) -> genai_types.Content:
    # Built from parts already validated (the eval case's own): google-genai's validation of
    # each new Part and Content again was most of a case's conversion time.
    return construct(genai_types.Content, role=role, parts=parts)


def expected_events(invocation: adk.Invocation, agent: str) -> list[AgentEvent]:
    """The expected agent side of one invocation, in order, ending with the final answer."""
    events: list[AgentEvent] = []
    data = invocation.intermediate_data
    if isinstance(data, adk.InvocationEvents):
        for event in data.invocation_events:
            if event.content is not None:
                events.append(AgentEvent(author=event.author, content=event.content))
    elif isinstance(data, adk.IntermediateData):
        responses = {r.id: r for r in data.tool_responses if r.id}
        unmatched = [r for r in data.tool_responses if not r.id]
        for call in data.tool_uses:
            events.append(
                AgentEvent(
                    author=agent,
                    content=_content("model", [construct(genai_types.Part, function_call=call)]),
                )
            )
            response = responses.pop(call.id, None) if call.id else None
            if response is None and unmatched:
                response = unmatched.pop(0)
            if response is not None:
                events.append(
                    AgentEvent(
                        author=agent,
                        content=_content(
                            "user", [construct(genai_types.Part, function_response=response)]
                        ),
                    )
                )
        for author, parts in data.intermediate_responses:
            events.append(AgentEvent(author=author, content=_content("model", list(parts))))
    final = invocation.final_response
    if final is not None and final.parts and any(p.text for p in final.parts):
        if final.role is None:
            final = final.model_copy(update={"role": "model"})
        events.append(AgentEvent(author=agent, content=final))
    elif _says_something(events):
        # No final response, but the agent said things on the way (intermediate responses):
        # an empty final answer says so, or the last of those would be read as the final one
        # (ADK's reference is empty there, unless include_intermediate_responses_in_final).
        empty = construct(genai_types.Part, text="")
        events.append(AgentEvent(author=agent, content=_content("model", [empty])))
    return events


def _says_something(events: list[AgentEvent]) -> bool:
    last = events[-1].content if events else None
    return last is not None and any(p.text for p in last.parts or [])


def agent_name(eval_case: adk.EvalCase, default: str) -> str:
    # The real agent id: the author of recorded events, else the session's app name.
    for invocation in eval_case.conversation or []:
        data = invocation.intermediate_data
        if isinstance(data, adk.InvocationEvents):
            for event in data.invocation_events:
                if event.author and event.author != "user":
                    return event.author
        if isinstance(data, adk.IntermediateData):
            for author, _ in data.intermediate_responses:
                if author and author != "user":
                    return author
    if eval_case.session_input and eval_case.session_input.app_name:
        return eval_case.session_input.app_name
    return default


def expected_agent_data(eval_case: adk.EvalCase, agent: str) -> AgentData:
    turns = []
    for index, invocation in enumerate(eval_case.conversation or []):
        turns.append(
            ConversationTurn(
                turn_index=index,
                turn_id=invocation.invocation_id or f"turn-{index}",
                events=[user_event(invocation), *expected_events(invocation, agent)],
            )
        )
    return AgentData(turns=turns)


EMPTY_CASE = "has no conversation and no conversation_scenario: nothing to evaluate"


def case_to_request(
    eval_case: adk.EvalCase, *, agent: str | None = None
) -> tuple[EvaluationRequest, CaseReport]:
    report = CaseReport(eval_case.eval_id)
    agent_id = agent or agent_name(eval_case, DEFAULT_AGENT)
    rubrics = rubric_groups(eval_case, report, titled=True)

    if eval_case.conversation_scenario is not None:
        scenario = eval_case.conversation_scenario
        prompt = EvaluationPrompt(
            user_scenario=UserScenario(
                starting_prompt=scenario.starting_prompt,
                conversation_plan=scenario.conversation_plan,
            )
        )
        # The persona goes in the item's metadata (case_to_item); anything else is reported.
        extra = {k: v for k, v in (scenario.model_extra or {}).items() if k != "user_persona"}
        if extra:
            report.not_carried.append(f"conversation_scenario fields {sorted(extra)}")
        report.carried.append("conversation_scenario as prompt.userScenario")
        return EvaluationRequest(prompt=prompt, rubrics=rubrics), report

    conversation = eval_case.conversation or []
    if not conversation:
        raise FormatError([Problem(None, f"eval case {eval_case.eval_id!r}", EMPTY_CASE)])
    golden = expected_agent_data(eval_case, agent_id)
    if len(conversation) == 1:
        text = "\n".join(p.text for p in conversation[0].user_content.parts or [] if p.text)
        non_text = [p for p in conversation[0].user_content.parts or [] if not p.text]
        if non_text:
            # Images or files in the user message: keep the message whole as context.
            prompt = EvaluationPrompt(
                agent_data=AgentData(
                    turns=[
                        ConversationTurn(
                            turn_index=0,
                            turn_id=conversation[0].invocation_id or "turn-0",
                            events=[user_event(conversation[0])],
                        )
                    ]
                )
            )
        else:
            prompt = EvaluationPrompt(text=text)
    else:
        context_turns = [t.model_copy() for t in golden.turns or []]
        last = context_turns[-1]
        context_turns[-1] = last.model_copy(update={"events": (last.events or [])[:1]})
        prompt = EvaluationPrompt(agent_data=AgentData(turns=context_turns))
    calls = sum(len(i.tool_calls()) for i in conversation)
    report.carried.append(f"{len(conversation)} turns with {calls} expected tool calls")
    request = EvaluationRequest(
        prompt=prompt,
        golden_response=CandidateResponse(agent_data=golden),
        rubrics=rubrics,
    )
    for invocation in conversation:
        if invocation.app_details:
            report.not_carried.append(f"app_details of {invocation.invocation_id or 'a turn'}")
    return request, report


#: What becomes of a case's initial session state: true of an upload, not of ``run --agent``
#: (the agent's runs started from it).
STATE_NOT_CARRIED = (
    "session_input.state (kept in item metadata; the service does not initialize sessions from it)"
)


def case_to_item(
    eval_case: adk.EvalCase, eval_set_id: str, *, agent: str | None = None
) -> tuple[EvaluationItem, CaseReport]:
    request, report = case_to_request(eval_case, agent=agent)
    metadata: dict[str, Any] = {"evalSetId": eval_set_id, "evalCaseId": eval_case.eval_id}
    if eval_case.session_input is not None:
        metadata[SESSION_INPUT_KEY] = eval_case.session_input.model_dump(
            mode="json", exclude_none=True
        )
        if eval_case.session_input.state:
            report.not_carried.append(STATE_NOT_CARRIED)
    scenario = eval_case.conversation_scenario
    persona = (scenario.model_extra or {}).get("user_persona") if scenario else None
    if persona is not None:
        metadata[USER_PERSONA_KEY] = persona
        report.not_carried.append(
            "conversation_scenario.user_persona (kept in item metadata, where ADK's "
            "simulator-quality criterion reads it; the service's UserScenario has no field)"
        )
    if eval_case.final_session_state:
        metadata[FINAL_SESSION_STATE_KEY] = eval_case.final_session_state
        report.not_carried.append(
            "final_session_state (kept in item metadata, where the emulator's "
            "final_session_state_match reads it; the service has no field for it)"
        )
    extra = eval_case.model_extra or {}
    if extra:
        metadata["extra"] = extra
        report.not_carried.append(f"unknown eval case fields {sorted(extra)} (kept in metadata)")
    item = EvaluationItem(
        display_name=eval_case.eval_id,
        evaluation_item_type=EvaluationItemType.REQUEST,
        labels={
            LABEL_EVAL_SET: label_value(eval_set_id),
            LABEL_EVAL_CASE: label_value(eval_case.eval_id),
        },
        metadata=metadata,
        evaluation_request=request,
    )
    return item, report


def eval_set_to_items(
    eval_set: adk.EvalSet, *, agent: str | None = None
) -> tuple[list[EvaluationItem], ConversionReport]:
    report = ConversionReport()
    items = []
    for eval_case in eval_set.eval_cases:
        item, case_report = case_to_item(eval_case, eval_set.eval_set_id, agent=agent)
        items.append(item)
        report.cases.append(case_report)
    return items, report
