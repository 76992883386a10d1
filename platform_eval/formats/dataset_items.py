"""EvaluationDataset cases straight into REQUEST evaluation items: the platform's own shape
read as the platform's own shape.

A dataset case is already what the service stores, field for field, so it is not taken
through ADK's ``EvalCase`` on its way (which has no rubric group keys, no system instruction
and no agent details, and lost them): rubric groups keep the keys the file gives them (a
metric's ``rubricGroupKey`` names them), ``system_instruction`` and ``agent_info.agents``
become the prompt's ``agentData.agents`` (``AgentConfig.instruction``), and the earlier turns
of a continued conversation stay the events the file holds. What an item cannot hold is in
the case's report, never dropped in silence.

Mapping of one case, as ``convert`` maps an ADK case where both can say it:

* ``prompt`` of text only: ``prompt.text``; with images or files, or with agent details to
  keep, ``prompt.agentData`` of one turn holding the user's message;
* ``agent_data`` (a continued conversation): ``prompt.agentData`` holds its turns, the last
  ending with the user message to answer;
* ``reference``: the last turn of ``goldenResponse.agentData``: its tool calls, then its text;
* ``user_scenario``: ``prompt.userScenario`` (the persona in the item's metadata, as ADK's).
"""

from __future__ import annotations

from typing import Any

from google.genai import types as genai_types

from ..types import (
    USER_PERSONA_KEY,
    AgentConfig,
    AgentData,
    AgentEvent,
    CandidateResponse,
    ConversationTurn,
    EvaluationItem,
    EvaluationItemType,
    EvaluationPrompt,
    EvaluationRequest,
    RubricGroup,
    UserScenario,
)
from ..types._fast_content import construct
from . import adk
from .convert import (
    DEFAULT_AGENT,
    LABEL_EVAL_CASE,
    LABEL_EVAL_SET,
    CaseReport,
    case_to_item,
    label_value,
)
from .dataset import DatasetCase, EvaluationDataset, ResponseCandidate
from .from_dataset import dataset_case_to_eval_case

#: A case as its file holds it: an ADK eval case, or an EvaluationDataset case.
FileCase = adk.EvalCase | DatasetCase

#: Fields of a dataset case no request field holds: said per case when a case has them.
_NOT_HELD = {
    "conversation_history": "conversation_history (give the earlier turns as agent_data)",
    "intermediate_events": "intermediate_events (give them as events of agent_data)",
}


def file_case_id(case: FileCase) -> str:
    if isinstance(case, adk.EvalCase):
        return case.eval_id
    assert case.eval_case_id is not None  # DatasetCases numbers the cases without one
    return case.eval_case_id


def file_case_item(case: FileCase, eval_set_id: str) -> tuple[EvaluationItem, CaseReport]:
    """The REQUEST item of a case, each kind read in its own shape."""
    if isinstance(case, adk.EvalCase):
        return case_to_item(case, eval_set_id)
    return dataset_case_to_item(case, eval_set_id)


class DatasetCases:
    """An EvaluationDataset's cases (``EvalCases``): uploaded as they are (``file_case``), and
    as ADK eval cases (``case``) only where an ADK case is needed: running an agent on them."""

    def __init__(
        self, dataset: EvaluationDataset, eval_set_id: str, path: str | None = None
    ) -> None:
        #: The file the cases were read from, for messages.
        self.path = path
        self._cases = [
            case if case.eval_case_id else case.model_copy(update={"eval_case_id": f"case-{i}"})
            for i, case in enumerate(dataset.eval_cases)
        ]
        self._eval_set_id = eval_set_id

    @property
    def eval_set_id(self) -> str:
        return self._eval_set_id

    @property
    def name(self) -> str | None:
        return None  # a dataset has no envelope

    def __len__(self) -> int:
        return len(self._cases)

    @property
    def keeps_parsed_cases(self) -> bool:
        return True  # they are all held already

    def file_case(self, index: int) -> FileCase:
        return self._cases[index]

    def case(self, index: int) -> adk.EvalCase:
        return dataset_case_to_eval_case(self._cases[index], index)[0]


def dataset_case_to_item(case: DatasetCase, eval_set_id: str) -> tuple[EvaluationItem, CaseReport]:
    eval_id = case.eval_case_id or "case"
    report = CaseReport(eval_id)
    for name, what in _NOT_HELD.items():
        if getattr(case, name):
            report.not_carried.append(what)
    metadata: dict[str, Any] = {"evalSetId": eval_set_id, "evalCaseId": eval_id}
    agents = _agents(case, report)
    if case.user_scenario is not None:
        prompt, golden = _scenario(case.user_scenario, metadata, report), None
    elif case.prompt is not None:
        prompt, golden = _single_turn(case.prompt, case.reference, agents)
    else:
        assert case.agent_data is not None  # DatasetCase's own validation
        prompt, golden = _continued(case.agent_data, case.reference, agents)
    if case.rubric_groups:
        report.carried.append(f"rubric groups {sorted(case.rubric_groups)}")
    request = EvaluationRequest(
        prompt=prompt,
        golden_response=golden,
        rubrics=_rubric_groups(case.rubric_groups),
    )
    item = EvaluationItem(
        display_name=eval_id,
        evaluation_item_type=EvaluationItemType.REQUEST,
        labels={
            LABEL_EVAL_SET: label_value(eval_set_id),
            LABEL_EVAL_CASE: label_value(eval_id),
        },
        metadata=metadata,
        evaluation_request=request,
    )
    return item, report


def _rubric_groups(groups: dict[str, RubricGroup] | None) -> dict[str, RubricGroup] | None:
    """The file's groups under the file's keys (a group without its own id takes its key)."""
    if not groups:
        return None
    return {
        key: group if group.group_id else group.model_copy(update={"group_id": key})
        for key, group in groups.items()
    }


def _agents(case: DatasetCase, report: CaseReport) -> dict[str, AgentConfig] | None:
    """The agents the case describes (``agent_info.agents``, the SDK's AgentInfo), the
    ``system_instruction`` as the instruction of the agent that answers; None when it
    describes none."""
    agents: dict[str, AgentConfig] = {}
    root: str | None = None
    info = case.agent_info or {}
    if info:
        described = info.get("agents") or {}
        for agent_id, config in described.items():
            agents[agent_id] = AgentConfig.model_validate(config)
        root = info.get("root_agent_id") or info.get("rootAgentId")
        others = sorted(set(info) - {"agents", "root_agent_id", "rootAgentId", "name"})
        if others:
            report.not_carried.append(f"agent_info fields {others}")
    instruction = case.system_instruction
    if instruction is not None:
        texts = [p.text for p in instruction.parts or [] if p.text]
        if len(texts) < len(instruction.parts or []):
            report.not_carried.append(
                "system_instruction parts other than text (an agent's instruction is text)"
            )
        recorded = _first_author(case.agent_data) if case.agent_data else None
        answering = root or recorded or next(iter(agents), None) or DEFAULT_AGENT
        config = agents.get(answering) or AgentConfig(agent_id=answering)
        agents[answering] = config.model_copy(update={"instruction": "\n".join(texts)})
    if agents:
        report.carried.append(f"agents {sorted(agents)} as prompt.agentData.agents")
    return agents or None


def _scenario(
    scenario: dict[str, Any], metadata: dict[str, Any], report: CaseReport
) -> EvaluationPrompt:
    checked = adk.ConversationScenario.model_validate(scenario)
    extra = dict(checked.model_extra or {})
    persona = extra.pop("user_persona", None)
    if persona is not None:
        metadata[USER_PERSONA_KEY] = persona
    if extra:
        report.not_carried.append(f"user_scenario fields {sorted(extra)}")
    report.carried.append("user_scenario as prompt.userScenario")
    return EvaluationPrompt(
        user_scenario=UserScenario(
            starting_prompt=checked.starting_prompt,
            conversation_plan=checked.conversation_plan,
        )
    )


def _user(content: genai_types.Content) -> AgentEvent:
    if content.role is None:
        content = content.model_copy(update={"role": "user"})
    return AgentEvent(author="user", content=content)


def _expected(reference: ResponseCandidate | None, agent: str) -> list[AgentEvent]:
    """A reference's tool calls, an event each, then its text as the final answer."""
    response = reference.response if reference else None
    parts = (response.parts or []) if response else []
    events = [
        AgentEvent(
            author=agent,
            content=construct(
                genai_types.Content,
                role="model",
                parts=[construct(genai_types.Part, function_call=p.function_call)],
            ),
        )
        for p in parts
        if p.function_call
    ]
    texts = [p for p in parts if p.text]
    if texts:
        events.append(
            AgentEvent(
                author=agent, content=construct(genai_types.Content, role="model", parts=texts)
            )
        )
    return events


def _single_turn(
    prompt: genai_types.Content,
    reference: ResponseCandidate | None,
    agents: dict[str, AgentConfig] | None,
) -> tuple[EvaluationPrompt, CandidateResponse]:
    user = _user(prompt)
    agent = next(iter(agents), DEFAULT_AGENT) if agents else DEFAULT_AGENT
    golden = AgentData(
        turns=[
            ConversationTurn(
                turn_index=0, turn_id="turn-0", events=[user, *_expected(reference, agent)]
            )
        ]
    )
    parts = prompt.parts or []
    if agents is None and all(p.text for p in parts):
        asked = EvaluationPrompt(text="\n".join(p.text or "" for p in parts))
    else:
        asked = EvaluationPrompt(
            agent_data=AgentData(
                agents=agents,
                turns=[ConversationTurn(turn_index=0, turn_id="turn-0", events=[user])],
            )
        )
    return asked, CandidateResponse(agent_data=golden)


def _continued(
    agent_data: AgentData,
    reference: ResponseCandidate | None,
    agents: dict[str, AgentConfig] | None,
) -> tuple[EvaluationPrompt, CandidateResponse]:
    """The file's turns as the prompt, up to the last user message; the golden response the
    same turns with the reference's answer after that message."""
    numbered = [
        turn.model_copy(
            update={
                "turn_index": index if turn.turn_index is None else turn.turn_index,
                "turn_id": turn.turn_id or f"turn-{index}",
            }
        )
        for index, turn in enumerate(agent_data.turns or [])
    ]
    # The message asked: the last user event (in a graded case the agent's answer follows it,
    # in its turn or in turns of its own: the candidate's, not the golden's).
    at, last = next(
        (i, turn)
        for i, turn in reversed(list(enumerate(numbered)))
        if any(e.author == "user" for e in turn.events or [])
    )
    events = list(last.events or [])
    asked_at = max(i for i, e in enumerate(events) if e.author == "user")
    asked = [*events[:asked_at], _user(events[asked_at].content or genai_types.Content())]
    agent = (next(iter(agents), None) if agents else None) or _first_author(agent_data)
    agent = agent or DEFAULT_AGENT
    prompt_turns = [*numbered[:at], last.model_copy(update={"events": asked})]
    golden_turns = [
        *numbered[:at],
        last.model_copy(update={"events": [*asked, *_expected(reference, agent)]}),
    ]
    return (
        EvaluationPrompt(agent_data=AgentData(agents=agents, turns=prompt_turns)),
        CandidateResponse(agent_data=AgentData(turns=golden_turns)),
    )


def _first_author(agent_data: AgentData) -> str | None:
    for turn in agent_data.turns or []:
        for event in turn.events or []:
            if event.author and event.author != "user":
                return event.author
    return None
