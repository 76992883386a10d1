"""Migration between ADK EvalSet files and Agent Platform EvaluationDataset files.

EvalSet -> EvaluationDataset follows the published rules (``eval_id`` -> ``eval_case_id``;
single-turn cases hoist the user message to ``prompt``; multi-turn cases become ``agent_data``
whose last event is the user message to answer) and keeps what the published migrator drops:

* the expected answer of the graded turn becomes ``reference.response``, preceded by the
  expected tool calls as ``function_call`` parts, so trajectories survive;
* earlier turns keep their expected tool calls, tool responses and answers as events, authored
  by the real agent id (not a placeholder);
* rubrics become ``rubric_groups``; a conversation scenario becomes ``user_scenario``;
* ``turn_index`` and ``turn_id`` are always written;
* what cannot be carried (session input, expected final state, rubric descriptions) is listed
  in the report, never dropped silently. Existing destinations are skipped unless asked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.genai import types as genai_types

from ..types import AgentData, AgentEvent, ConversationTurn
from . import adk
from .convert import CaseReport, agent_name, expected_events, rubric_groups, user_event
from .dataset import DatasetCase, EvaluationDataset, ResponseCandidate
from .from_dataset import dataset_to_eval_set
from .load import load_dataset, load_eval_set


@dataclass
class MigrationReport:
    source: str | None = None
    destination: str | None = None
    skipped: bool = False
    cases: list[CaseReport] = field(default_factory=list)

    @property
    def not_carried(self) -> dict[str, list[str]]:
        return {c.eval_id: c.not_carried for c in self.cases if c.not_carried}

    def summary(self) -> str:
        if self.skipped:
            return f"{self.destination}: exists, skipped (pass overwrite=True to replace)"
        lines = [f"{self.source} -> {self.destination}: {len(self.cases)} cases"]
        for case in self.cases:
            for what in case.not_carried:
                lines.append(f"  {case.eval_id}: not carried: {what}")
        return "\n".join(lines)


def _reference(events: list[AgentEvent], report: CaseReport) -> ResponseCandidate | None:
    """The last turn's tool calls and its final answer (the last text), as a reference.

    A reference's text is read as the answer, all of it: texts the agents said on the way (a
    sub-agent's answer to its parent, a note before a tool call) would make the expected
    answer longer than the one the agent gives, so they are left out, and said so.
    """
    parts: list[genai_types.Part] = []
    texts: list[int] = []
    responses = 0
    for event in events:
        if event.content and event.content.parts:
            for part in event.content.parts:
                responses += part.function_response is not None
                if part.function_call or part.text:
                    if part.text:
                        texts.append(len(parts))
                    parts.append(part)
    if responses:
        report.not_carried.append(
            f"{responses} tool responses of the last turn (a reference holds its tool calls "
            "and its final answer)"
        )
    if not parts:
        return None
    final = texts[-1] if texts else None
    said_on_the_way = [i for i in texts if i != final]
    if said_on_the_way:
        report.not_carried.append(
            f"{len(said_on_the_way)} intermediate agent texts of the last turn (a reference "
            "holds its tool calls and its final answer)"
        )
        parts = [p for i, p in enumerate(parts) if i not in said_on_the_way]
    return ResponseCandidate(response=genai_types.Content(role="model", parts=parts))


def case_to_dataset_case(eval_case: adk.EvalCase) -> tuple[DatasetCase, CaseReport]:
    report = CaseReport(eval_case.eval_id)
    groups = rubric_groups(eval_case, report, titled=False)
    if eval_case.session_input is not None:
        report.not_carried.append(
            "session_input (initialize agent state in the agent code instead)"
        )
    if eval_case.final_session_state:
        report.not_carried.append("final_session_state")
    if eval_case.conversation_scenario is not None:
        scenario = eval_case.conversation_scenario
        report.carried.append("conversation_scenario as user_scenario")
        case = DatasetCase(
            eval_case_id=eval_case.eval_id,
            user_scenario={
                "starting_prompt": scenario.starting_prompt,
                "conversation_plan": scenario.conversation_plan,
            },
            rubric_groups=groups,
        )
        return case, report

    conversation = eval_case.conversation or []
    agent = agent_name(eval_case, "agent")
    last = conversation[-1]
    reference = _reference(expected_events(last, agent), report)
    if len(conversation) == 1:
        prompt = last.user_content
        if prompt.role is None:
            prompt = prompt.model_copy(update={"role": "user"})
        case = DatasetCase(
            eval_case_id=eval_case.eval_id, prompt=prompt, reference=reference, rubric_groups=groups
        )
    else:
        turns = []
        for index, invocation in enumerate(conversation):
            events = [user_event(invocation)]
            if index < len(conversation) - 1:
                events += expected_events(invocation, agent)
            turns.append(
                ConversationTurn(
                    turn_index=index,
                    turn_id=invocation.invocation_id or f"turn-{index}",
                    events=events,
                )
            )
        case = DatasetCase(
            eval_case_id=eval_case.eval_id,
            agent_data=AgentData(turns=turns),
            reference=reference,
            rubric_groups=groups,
        )
    calls = sum(len(i.tool_calls()) for i in conversation)
    report.carried.append(f"{len(conversation)} turns, {calls} expected tool calls")
    return case, report


def eval_set_to_dataset(eval_set: adk.EvalSet) -> tuple[EvaluationDataset, list[CaseReport]]:
    cases, reports = [], []
    for eval_case in eval_set.eval_cases:
        case, report = case_to_dataset_case(eval_case)
        cases.append(case)
        reports.append(report)
    if eval_set.name or eval_set.description:
        for report in reports[:1]:
            report.not_carried.append("eval set name/description (a dataset has no envelope)")
    return EvaluationDataset(eval_cases=cases), reports


# -- files ------------------------------------------------------------------------------------


def dataset_path_for(source: Path, destination_dir: Path) -> Path:
    name = source.name
    for suffix in (".evalset.json", ".test.json", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return destination_dir / f"{name}-dataset.json"


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON at ``path``, written whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(path)


def migrate_file(
    source: str | Path, destination: str | Path, *, overwrite: bool = False
) -> MigrationReport:
    """Writes the EvaluationDataset of an ADK eval set file.

    ``destination`` is a file path, or a directory to write ``<name>-dataset.json`` into.
    """
    source_path, target = Path(source), Path(destination)
    if target.is_dir() or not target.suffix:
        target = dataset_path_for(source_path, target)
    report = MigrationReport(source=str(source_path), destination=str(target))
    if target.exists() and not overwrite:
        report.skipped = True
        return report
    dataset, report.cases = eval_set_to_dataset(load_eval_set(source_path))
    write_json(target, dataset.to_json_dict())
    return report


def migrate_directory(
    source_dir: str | Path, destination_dir: str | Path, *, overwrite: bool = False
) -> list[MigrationReport]:
    """Migrates every ``*.evalset.json`` and ``*.test.json`` of a directory."""
    sources = sorted(
        p for pattern in ("*.evalset.json", "*.test.json") for p in Path(source_dir).glob(pattern)
    )
    return [migrate_file(p, Path(destination_dir), overwrite=overwrite) for p in sources]


def unmigrate_file(
    source: str | Path,
    destination: str | Path,
    *,
    eval_set_id: str | None = None,
    overwrite: bool = False,
) -> MigrationReport:
    """Writes the ADK eval set of an EvaluationDataset file (the reverse migration)."""
    source_path, target = Path(source), Path(destination)
    set_id = eval_set_id or source_path.name.removesuffix(".json").removesuffix("-dataset")
    if target.is_dir() or not target.suffix:
        target = target / f"{set_id}.evalset.json"
    report = MigrationReport(source=str(source_path), destination=str(target))
    if target.exists() and not overwrite:
        report.skipped = True
        return report
    eval_set, report.cases = dataset_to_eval_set(load_dataset(source_path), set_id)
    write_json(target, eval_set.to_json_dict())
    return report
