"""An agents-cli trace file from an agent run: what ``agents-cli eval generate`` writes, so
that agents-cli grades our runs and we grade theirs.

Each case of the dataset (or of the eval set, migrated to one) is run by the agent in-process
(google-adk's Runner, as ``run --agent`` runs it), and written back as agents-cli merges a
case: the agent's new events appended to ``agent_data``'s last turn (a fresh ``turn_0`` for a
``prompt`` case), its final text appended to ``responses``, and ``agent_data.agents`` what
each agent was given (instruction, tools, sub-agents). A case the agent failed on is left out
and reported with the error, as agents-cli does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from google.genai import types as genai_types

from ..formats import adk

if TYPE_CHECKING:
    from ..agents import AgentLike, AgentProgressCallback
from ..formats.dataset import DatasetCase, EvaluationDataset, ResponseCandidate
from ..formats.from_dataset import dataset_to_eval_set
from ..formats.load import Kind, dataset_set_id, eval_set_from, load
from ..formats.migrate import eval_set_to_dataset, write_json
from ..types import AgentData, AgentEvent, ConversationTurn
from .agent_job import AgentOptions, run_for_candidates

#: Where agents-cli writes its trace files, under the project folder.
DEFAULT_TRACES_DIR = Path("artifacts") / "traces"


@dataclass
class GenerateReport:
    """What ``generate_traces`` wrote, and the cases it left out with why."""

    path: Path
    written: int = 0
    failed: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        line = f"wrote {self.written} cases to {self.path}"
        if self.failed:
            shown = "; ".join(f"{case}: {why}" for case, why in list(self.failed.items())[:5])
            line += f"; the agent failed on {len(self.failed)}: {shown}"
        return line


def default_output(now: datetime | None = None) -> Path:
    """``artifacts/traces/traces_<timestamp>.json``, as agents-cli names its trace files."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d_%H%M%S")
    return DEFAULT_TRACES_DIR / f"traces_{stamp}.json"


def _dataset_of(source: str | Path) -> tuple[EvaluationDataset, adk.EvalSet]:
    """The dataset to write back, and the eval set the agent runs, case for case (read as
    ``run`` reads the file: a bad one is said as there)."""
    loaded = load(source)
    if loaded.kind == Kind.DATASET:
        return EvaluationDataset.model_validate(loaded.data), eval_set_from(loaded)
    dataset, _ = eval_set_to_dataset(eval_set_from(loaded))
    # The agent runs the migrated cases, as agents-cli would run the migrated file.
    converted, _ = dataset_to_eval_set(dataset, dataset_set_id(str(source)))
    return dataset, converted


async def generate_traces_async(
    source: str | Path,
    agent: AgentLike,
    output: str | Path | None = None,
    *,
    concurrency: int | None = None,
    user_simulator_config: Mapping[str, Any] | None = None,
    on_progress: AgentProgressCallback | None = None,
) -> GenerateReport:
    """Runs ``agent`` on every case of ``source`` and writes the trace file to ``output``."""
    dataset, eval_set = _dataset_of(source)
    options = AgentOptions(
        agent=agent,
        concurrency=concurrency or AgentOptions.concurrency,
        user_simulator_config=dict(user_simulator_config) if user_simulator_config else None,
        on_progress=on_progress,
        resume=False,  # a trace file is one fresh run of every case
    )
    ran = await run_for_candidates(eval_set, options, "agent")
    report = GenerateReport(Path(output) if output is not None else default_output())
    cases = []
    for case, eval_case in zip(dataset.eval_cases, eval_set.eval_cases, strict=True):
        produced = ran.candidates.get(eval_case.eval_id)
        if not produced or produced[0].agent_data is None:
            why = ran.not_evaluated.get(eval_case.eval_id, {}).get("agent", "no session")
            report.failed[eval_case.eval_id] = why.removeprefix("the agent failed on this case: ")
            continue
        cases.append(merged(case, produced[0].agent_data, eval_case.history_turns))
    write_json(report.path, EvaluationDataset(eval_cases=cases).to_json_dict())
    report.written = len(cases)
    return report


def generate_traces(
    source: str | Path,
    agent: AgentLike,
    output: str | Path | None = None,
    **options: Any,
) -> GenerateReport:
    """``generate_traces_async``, run to completion."""
    return asyncio.run(generate_traces_async(source, agent, output, **options))


def merged(case: DatasetCase, produced: AgentData, history_turns: int) -> DatasetCase:
    """``case`` with what the agent did, merged as agents-cli's ``eval generate`` merges it."""
    turns = list(produced.turns or [])[history_turns:]
    if case.user_scenario is not None:
        # A simulated conversation: every turn, the simulated user's messages included.
        new_turns = [_without_signatures(t) for t in turns]
        agent_data = AgentData(agents=produced.agents, turns=new_turns)
        return _with_answer(case, agent_data, _events(new_turns))
    new_events = [
        _without_signature(event)
        for turn in turns
        for event in turn.events or []
        if event.author != "user"
    ]
    kept = list((case.agent_data.turns if case.agent_data else None) or [])
    if kept:
        last = kept[-1]
        kept[-1] = last.model_copy(update={"events": [*(last.events or []), *new_events]})
    else:
        kept = [ConversationTurn(turn_index=0, turn_id="turn_0", events=new_events)]
    agent_data = (case.agent_data or AgentData()).model_copy(
        update={"turns": kept, "agents": produced.agents or None}
    )
    return _with_answer(case, agent_data, new_events)


def _with_answer(case: DatasetCase, agent_data: AgentData, events: list[AgentEvent]) -> DatasetCase:
    responses = list(case.responses or [])
    final = _final_response(events)
    if final is not None:
        responses.append(ResponseCandidate(response=final))
    return case.model_copy(
        update={"agent_data": agent_data, "responses": responses if final or responses else []}
    )


def _events(turns: list[ConversationTurn]) -> list[AgentEvent]:
    return [event for turn in turns for event in turn.events or [] if event.author != "user"]


def _final_response(events: list[AgentEvent]) -> genai_types.Content | None:
    """The last agent text, joined, as agents-cli's ``final_response_content_from_events``."""
    for event in reversed(events):
        parts = event.content.parts if event.content else None
        texts = [p.text for p in parts or [] if p.text]
        if texts:
            role = event.content.role if event.content else None
            return genai_types.Content(
                role=role or "model", parts=[genai_types.Part(text="".join(texts))]
            )
    return None


def _without_signature(event: AgentEvent) -> AgentEvent:
    """The event without thought signatures (opaque model bytes agents-cli strips too)."""
    content = event.content
    if content is None or not any(p.thought_signature for p in content.parts or []):
        return event
    parts = [p.model_copy(update={"thought_signature": None}) for p in content.parts or []]
    return event.model_copy(update={"content": content.model_copy(update={"parts": parts})})


def _without_signatures(turn: ConversationTurn) -> ConversationTurn:
    return turn.model_copy(update={"events": [_without_signature(e) for e in turn.events or []]})
