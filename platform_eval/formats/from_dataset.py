"""An EvaluationDataset's cases as ADK eval cases (the reverse of ``migrate``'s direction):
what reading a dataset file and ``unmigrate`` share, so that neither imports the other.

What an eval case cannot hold (``responses``, ``system_instruction``, the conversation history,
an agent's details) is listed in each case's report, never dropped in silence.
"""

from __future__ import annotations

from google.genai import types as genai_types

from ..types import ConversationTurn
from . import adk
from .convert import CaseReport
from .dataset import DatasetCase, EvaluationDataset, ResponseCandidate, last_user_content


def invocation_from_turn(turn: ConversationTurn, index: int) -> adk.Invocation:
    """An AgentData turn as an ADK invocation: its user message, its last text answer as the
    final response, and every other event (tool calls and responses) as invocation events."""
    events = turn.events or []
    user = next((e for e in events if e.author == "user" and e.content), None)
    user_content = (
        user.content if user and user.content else genai_types.Content(role="user", parts=[])
    )
    agent_events = [e for e in events if e is not user and e.content is not None]
    final = None
    if (
        agent_events
        and agent_events[-1].content
        and any(p.text for p in agent_events[-1].content.parts or [])
    ):
        final = agent_events.pop().content
    return adk.Invocation(
        invocation_id=turn.turn_id or f"turn-{index}",
        user_content=user_content,
        final_response=final,
        intermediate_data=adk.InvocationEvents(
            invocation_events=[
                adk.InvocationEvent(author=e.author or "agent", content=e.content)
                for e in agent_events
            ]
        )
        if agent_events
        else None,
    )


def _from_reference(
    user_content: genai_types.Content, reference: ResponseCandidate | None, invocation_id: str
) -> adk.Invocation:
    response = reference.response if reference else None
    parts = response.parts or [] if response else []
    calls = [p.function_call for p in parts if p.function_call]
    texts = [p for p in parts if p.text]
    return adk.Invocation(
        invocation_id=invocation_id,
        user_content=user_content,
        final_response=genai_types.Content(role="model", parts=texts) if texts else None,
        intermediate_data=adk.IntermediateData(tool_uses=calls) if calls else None,
    )


def dataset_case_to_eval_case(case: DatasetCase, index: int) -> tuple[adk.EvalCase, CaseReport]:
    eval_id = case.eval_case_id or f"case-{index}"
    report = CaseReport(eval_id)
    for name in (
        "responses",
        "system_instruction",
        "conversation_history",
        "intermediate_events",
        "agent_info",
    ):
        if getattr(case, name):
            report.not_carried.append(f"{name} (an ADK eval case has no such field)")
    if case.agent_data is not None and case.agent_data.agents:
        report.not_carried.append("agent_data.agents (ADK reads the agent from code)")
    rubrics: list[adk.AdkRubric] = []
    for key, group in (case.rubric_groups or {}).items():
        if key.startswith("invocation_"):
            report.not_carried.append(f"rubric group {key!r} is kept as case rubrics")
        for rubric in group.rubrics or []:
            rubrics.append(
                adk.AdkRubric(
                    rubric_id=rubric.rubric_id or f"{key}-{len(rubrics)}",
                    rubric_content=adk.RubricContent(text_property=rubric.description),
                    type=rubric.type,
                )
            )
    if case.user_scenario is not None:
        eval_case = adk.EvalCase(
            eval_id=eval_id,
            conversation_scenario=adk.ConversationScenario.model_validate(case.user_scenario),
            rubrics=rubrics or None,
        )
        return eval_case, report
    if case.prompt is not None:
        conversation = [_from_reference(case.prompt, case.reference, "turn-0")]
    else:
        assert case.agent_data is not None
        turns = list(case.agent_data.turns or [])
        conversation = [invocation_from_turn(t, i) for i, t in enumerate(turns[:-1])]
        last = turns[-1]
        # The message the case asks the agent to answer: the last user event (a graded case's
        # agent answered it in that same turn).
        user = last_user_content(case.agent_data) or genai_types.Content(role="user", parts=[])
        conversation.append(
            _from_reference(user, case.reference, last.turn_id or f"turn-{len(turns) - 1}")
        )
        # The earlier turns happened: an agent run on the case answers the last message only.
        eval_case = adk.EvalCase(
            eval_id=eval_id, conversation=conversation, rubrics=rubrics or None
        )
        return eval_case.continuing(len(conversation) - 1), report
    return adk.EvalCase(eval_id=eval_id, conversation=conversation, rubrics=rubrics or None), report


def dataset_to_eval_set(
    dataset: EvaluationDataset, eval_set_id: str
) -> tuple[adk.EvalSet, list[CaseReport]]:
    cases, reports = [], []
    for index, case in enumerate(dataset.eval_cases):
        eval_case, report = dataset_case_to_eval_case(case, index)
        cases.append(eval_case)
        reports.append(report)
    return adk.EvalSet(eval_set_id=eval_set_id, name=eval_set_id, eval_cases=cases), reports
