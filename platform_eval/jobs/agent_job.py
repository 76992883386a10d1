"""An evaluation whose candidates come from running the agent: each case's finished session,
read as a saved session is read, becomes the case's candidate (one per run)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._adaptive import AUTO, DEFAULT_CAP
from ..agents import (
    DEFAULT_AGENT_CONCURRENCY,
    AgentJournal,
    AgentLike,
    AgentProgressCallback,
    AgentRunReport,
    CaseRun,
)
from ..agents.live import turn_timeout
from ..agents.saving import save_sessions, save_traces
from ..agents.source import AgentSource, RunSettings, open_agent, run_cases
from ..agents.tool_mocks import plan_mocks
from ..agents.usage import session_usage
from ..formats import adk
from ..metrics.arguments import ArgRules
from ..traces.adk_session import session_to_conversation
from ..types import AgentConfig, AgentData, CandidateResponse
from .plan_error import PlanError
from .upload import candidate_name

_logger = logging.getLogger("platform_eval.jobs")

#: How the agent is run on a case: a request per user turn, or one live conversation.
AGENT_MODES = ("run", "live")


@dataclass(frozen=True, kw_only=True)
class AgentOptions:
    """How ``evaluate(agent=...)`` runs the agent."""

    agent: AgentLike
    num_runs: int = 1
    #: Cases at once: "auto" (adapted to the model's quota, up to max_concurrency) or a number.
    concurrency: int | str = DEFAULT_AGENT_CONCURRENCY
    max_concurrency: int = DEFAULT_CAP
    #: Processes the cases run in: "auto" (one per 25 runs, up to the cores; this one alone
    #: for a short run or an agent already loaded here) or a number (1: this process alone).
    processes: int | str = AUTO
    save_sessions: str | Path | None = None
    save_traces: str | Path | None = None
    user_simulator_config: dict[str, Any] | None = None
    on_progress: AgentProgressCallback | None = None
    #: Keep finished runs as they finish, so that an interrupted evaluation resumes.
    resume: bool = True
    #: "golden" (each case's expected tool responses), a mock file's path or
    #: "sessions:DIR" (recorded runs' responses): tool calls answered, the tools not run
    #: (``agents.tool_mocks``); None: the tools run.
    mock_tools: str | None = None
    #: Tools that run for real even with mocks.
    real_tools: tuple[str, ...] = ()
    #: A call no golden response answers: "error" fails its case, "real" runs the tool.
    unmatched_tools: str = "error"
    #: The trajectory criterion's args_match rules, which golden answers are matched by.
    tool_arg_rules: ArgRules | None = None
    #: "run" (each user turn a request, as adk eval runs it) or "live" (each case one live
    #: conversation, as ADK's /run_live holds it: ``agents.live``).
    mode: str = "run"

    def __post_init__(self) -> None:
        if self.mode not in AGENT_MODES:
            raise ValueError(f"agent_mode {self.mode!r}: expected one of {', '.join(AGENT_MODES)}")
        if self.live:
            turn_timeout()  # a bad PLATFORM_EVAL_LIVE_TURN_TIMEOUT is said before any run

    @property
    def live(self) -> bool:
        return self.mode == "live"


@dataclass
class AgentCandidates:
    report: AgentRunReport
    candidates: dict[str, list[CandidateResponse]]
    #: eval id -> candidate -> why the agent produced nothing to evaluate.
    not_evaluated: dict[str, dict[str, str]]
    journal: AgentJournal | None
    #: What each session holds of its candidate beside AgentData (``CandidateRecords``).
    records: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    #: eval id -> candidate -> what its run cost and took (``agents.usage``).
    usage: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)


def run_settings(options: AgentOptions, mocks: Any = None) -> RunSettings:
    """How the cases run on any source (``agents.source.RunSettings``), from ``options``."""
    decided_by: dict[str, Any] = {"simulator": options.user_simulator_config}
    if mocks is not None:
        # A run with mocked tools is not one with the real tools: not resumed as one.
        decided_by["mocks"] = mocks.fingerprint
    if options.live:
        decided_by["mode"] = options.mode
    return RunSettings(
        num_runs=options.num_runs,
        concurrency=options.concurrency,
        max_concurrency=options.max_concurrency,
        processes=options.processes,
        user_simulator_config=options.user_simulator_config,
        record_spans=options.save_traces is not None,
        live=options.live,
        tool_mocks=mocks.for_case if mocks is not None else None,
        decided_by=decided_by,
        resume=options.resume,
        on_progress=options.on_progress,
    )


async def run_for_candidates(
    eval_set: adk.EvalSet, options: AgentOptions, candidate: str
) -> AgentCandidates:
    """Runs the agent on every case of ``eval_set``, wherever it lives (``agents.source``),
    and turns the sessions into candidates."""
    source = open_agent(options.agent)
    refused = refusal(source, options)
    if refused is not None:
        raise refused
    mocks = plan_mocks(
        options.mock_tools,
        eval_set.eval_cases,
        rules=options.tool_arg_rules,
        real_tools=options.real_tools,
        unmatched=options.unmatched_tools,
    )
    report, journal = await run_cases(source, eval_set.eval_cases, run_settings(options, mocks))
    return _candidates(report, options, candidate, journal)


def refusal(source: AgentSource, options: AgentOptions) -> PlanError | None:
    """What ``options`` ask that ``source`` cannot do (its ``Capabilities``), in the plan's
    words; None when it can. ``build_plan`` asks it before anything is read or run."""
    can = source.capabilities
    where = f"{source.spec} is {source.kind}"
    if options.live and not can.live:
        return PlanError(
            "{agent_mode}: " + where + ", which has no live stream here; evaluate it in run "
            "mode, or run its ADK app here or with adk api_server for live mode",
            agent_mode=options.mode,
        )
    if options.mock_tools is not None and not can.mock_tools:
        return PlanError(
            "{mock_tools}: " + where + ", which runs its tools on its server, where they cannot "
            "be answered from here; mock them in the deployment, or run the agent's folder here",
            mock_tools=options.mock_tools,
        )
    if options.save_traces is not None and not can.spans:
        return PlanError(
            "{save_traces}: the spans of " + source.spec + " are recorded on its server (its "
            "telemetry exporter), not here; {save_sessions} keeps its sessions",
            save_traces=str(options.save_traces),
            save_sessions=True,
        )
    return None


def _candidates(
    report: AgentRunReport, options: AgentOptions, candidate: str, journal: AgentJournal | None
) -> AgentCandidates:
    """Each finished session as its case's candidate; a failed run NOT_EVALUATED with why."""
    if options.save_sessions is not None:
        save_sessions(report, options.save_sessions)
    else:
        spoken = sum(len(run.audio) for run in report.runs)
        if spoken:
            # Scored on its transcript, the audio itself is kept nowhere else: said, not lost.
            _logger.warning(
                "live mode: the agent's audio of %d turns is not kept; --save-sessions DIR "
                "writes each turn's WAV beside its session",
                spoken,
            )
    if options.save_traces is not None:
        save_traces(report, options.save_traces)
    candidates: dict[str, list[CandidateResponse]] = {}
    not_evaluated: dict[str, dict[str, str]] = {}
    records: dict[str, dict[str, dict[str, Any]]] = {}
    usage: dict[str, dict[str, dict[str, Any]]] = {}
    for run in report.runs:
        name = candidate_name(candidate, run.run, report.num_runs)
        if run.session is None:
            not_evaluated.setdefault(run.eval_id, {})[name] = (
                f"the agent failed on this case: {run.error}"
            )
            continue
        usage.setdefault(run.eval_id, {})[name] = session_usage(run.session, run.turn_seconds)
        response, kept_by_key = run_candidate(run, name)
        candidates.setdefault(run.eval_id, []).append(response)
        for key, kept in kept_by_key.items():
            records.setdefault(run.eval_id, {}).setdefault(key, {})[name] = kept
    return AgentCandidates(report, candidates, not_evaluated, journal, records, usage)


def run_candidate(run: CaseRun, name: str) -> tuple[CandidateResponse, dict[str, Any]]:
    """A finished run's session as the candidate ``name``, and what the session holds of it
    beside its AgentData (its final state, grounding, each turn's agents: by the item metadata
    key that keeps it), as every path that scores an agent's run reads it (``run``,
    ``optimize``)."""
    assert run.session is not None
    conversation = session_to_conversation(run.session, source=f"agent run {run.key}")
    for note in conversation.notes:
        _logger.warning("agent run %s: %s", run.key, note)
    response = CandidateResponse(
        candidate=name, agent_data=with_agents(conversation.agent_data, run.agents)
    )
    return response, conversation.records()


def with_agents(agent_data: AgentData, agents: Mapping[str, Any] | None) -> AgentData:
    """The session's AgentData with what each agent was given (``CaseRun.agents``): ADK's
    judged criteria read it as the app details ``adk eval`` records."""
    if not agents:
        return agent_data
    known = dict(agent_data.agents or {})
    for name, config in agents.items():
        known[name] = AgentConfig.model_validate(config)
    return agent_data.model_copy(update={"agents": known})


def failures_summary(not_evaluated: Mapping[str, Mapping[str, str]]) -> str:
    """Each distinct reason once, with the runs it stopped (the first few named)."""
    by_reason: dict[str, list[str]] = {}
    for case, whys in not_evaluated.items():
        for candidate, why in whys.items():
            by_reason.setdefault(why, []).append(f"{case} [{candidate}]")
    parts = []
    for why, runs in by_reason.items():
        named = ", ".join(runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
        parts.append(f"{why} ({len(runs)} {'run' if len(runs) == 1 else 'runs'}: {named})")
    return "; ".join(parts)
