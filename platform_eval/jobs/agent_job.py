"""An evaluation whose candidates come from running the agent: each case's finished session,
read as a saved session is read, becomes the case's candidate (one per run)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _standby
from .._adaptive import AUTO, DEFAULT_CAP, parse_concurrency
from .._standby import process_count
from ..agents import (
    DEFAULT_AGENT_CONCURRENCY,
    AgentJournal,
    AgentProgressCallback,
    AgentRunReport,
    AgentSource,
    LoadedAgent,
    load_agent,
    run_agent_cases,
)
from ..agents.live import turn_timeout
from ..agents.remote import ServedAgent, ServedAgentError, is_a2a_card, is_agent_url
from ..agents.running import CaseSettings
from ..agents.saving import save_sessions, save_traces
from ..agents.served import connect, run_served_cases
from ..agents.tool_mocks import plan_mocks
from ..agents.usage import session_usage
from ..agents.workers import WorkerPool
from ..formats import adk
from ..metrics.arguments import ArgRules
from ..traces.adk_session import session_to_conversation
from ..types import AgentConfig, AgentData, CandidateResponse
from .upload import candidate_name

_logger = logging.getLogger("platform_eval.jobs")

#: How the agent is run on a case: a request per user turn, or one live conversation.
AGENT_MODES = ("run", "live")


@dataclass(frozen=True, kw_only=True)
class AgentOptions:
    """How ``evaluate(agent=...)`` runs the agent."""

    agent: AgentSource
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


async def run_for_candidates(
    eval_set: adk.EvalSet, options: AgentOptions, candidate: str
) -> AgentCandidates:
    """Runs the agent on every case of ``eval_set`` and turns the sessions into candidates."""
    agent = options.agent
    if options.live and is_a2a_card(agent):
        raise ServedAgentError(
            f"--agent-mode live: {agent} is an A2A peer, which answers messages, not a live "
            "stream; evaluate it in run mode"
        )
    if isinstance(agent, ServedAgent) or is_agent_url(agent):
        _standby.release()  # the agent runs on its server: no worker process here takes part
        served = agent if isinstance(agent, ServedAgent) else ServedAgent(str(agent))
        return await _run_served(eval_set, options, candidate, served)
    runs = len(eval_set.eval_cases) * options.num_runs
    # An agent loaded by the caller may hold what they set up in it: it runs here only, unless
    # they ask for processes, which load it again from its spec.
    in_place = isinstance(agent, LoadedAgent) and options.processes == AUTO
    processes = 1 if in_place else process_count(options.processes, runs)
    if processes == 1:
        _standby.release()  # workers the command started in case the run wanted them
    workers = None
    if processes > 1:
        # Started first: the workers load the agent while this process does.
        settings = CaseSettings(
            options.num_runs,
            parse_concurrency(options.concurrency) == AUTO,
            options.user_simulator_config,
            options.save_traces is not None,
            options.live,
        )
        spec = agent.spec if isinstance(agent, LoadedAgent) else str(agent)
        workers = WorkerPool(spec, processes - 1, settings)
        await workers.start()
    try:
        return await _run_for_candidates(eval_set, options, candidate, agent, workers)
    finally:
        if workers is not None:
            await workers.close()


async def _run_for_candidates(
    eval_set: adk.EvalSet,
    options: AgentOptions,
    candidate: str,
    agent: AgentSource,
    workers: WorkerPool | None,
) -> AgentCandidates:
    if not isinstance(agent, LoadedAgent):
        assert not isinstance(agent, ServedAgent)  # run_for_candidates sent it to _run_served
        agent = await load_agent(agent)
    mocks = plan_mocks(
        options.mock_tools,
        eval_set.eval_cases,
        rules=options.tool_arg_rules,
        real_tools=options.real_tools,
        unmatched=options.unmatched_tools,
    )
    journal = None
    if options.resume:
        journal = AgentJournal(
            agent_fingerprint=agent.fingerprint,
            agent_spec=agent.spec,
            settings={
                "simulator": options.user_simulator_config,
                # A run with mocked tools is not one with the real tools: not resumed as one.
                **({"mocks": mocks.fingerprint} if mocks is not None else {}),
                **({"mode": options.mode} if options.live else {}),
            },
        )
    report = await run_agent_cases(
        agent,
        eval_set.eval_cases,
        num_runs=options.num_runs,
        concurrency=options.concurrency,
        max_concurrency=options.max_concurrency,
        user_simulator_config=options.user_simulator_config,
        journal=journal,
        record_spans=options.save_traces is not None,
        on_progress=options.on_progress,
        tool_mocks=mocks.for_case if mocks is not None else None,
        workers=workers,
        live=options.live,
    )
    return _candidates(report, options, candidate, journal)


async def _run_served(
    eval_set: adk.EvalSet, options: AgentOptions, candidate: str, agent: ServedAgent
) -> AgentCandidates:
    """The cases run on a served agent: its tools run there, and its spans stay there."""
    if options.mock_tools is not None:
        raise ServedAgentError(
            f"--mock-tools: the agent at {agent.url} runs its tools on its server, where they "
            "cannot be answered from here; mock them in the deployment, or run the agent's "
            "folder (--agent DIR)"
        )
    if options.save_traces is not None:
        raise ServedAgentError(
            f"--save-traces: the spans of the agent at {agent.url} are recorded on its server "
            "(its telemetry exporter), not here; --save-sessions keeps its sessions"
        )
    cap = options.max_concurrency
    async with connect(agent, cap) as app:
        journal = None
        if options.resume:
            journal = AgentJournal(
                agent_fingerprint=app.fingerprint,
                agent_spec=agent.spec,
                settings={
                    "simulator": options.user_simulator_config,
                    **({"mode": options.mode} if options.live else {}),
                },
            )
        report = await run_served_cases(
            app,
            eval_set.eval_cases,
            num_runs=options.num_runs,
            concurrency=options.concurrency,
            max_concurrency=cap,
            user_simulator_config=options.user_simulator_config,
            journal=journal,
            on_progress=options.on_progress,
            live=options.live,
        )
    return _candidates(report, options, candidate, journal)


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
        conversation = session_to_conversation(run.session, source=f"agent run {run.key}")
        for note in conversation.notes:
            _logger.warning("agent run %s: %s", run.key, note)
        candidates.setdefault(run.eval_id, []).append(
            CandidateResponse(
                candidate=name, agent_data=with_agents(conversation.agent_data, run.agents)
            )
        )
        for key, kept in conversation.records().items():
            records.setdefault(run.eval_id, {}).setdefault(key, {})[name] = kept
    return AgentCandidates(report, candidates, not_evaluated, journal, records, usage)


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
