"""An agent run in this process, as ``adk eval`` runs it: its folder, its ``agent.py``,
``module:attribute`` (``loading``), or an agent the caller loaded. Its cases run through
google-adk's ``Runner`` (``running``), here and, for a long run, in worker processes that each
load the agent from its spec (``workers``)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from .. import _standby
from .._adaptive import AUTO, DEFAULT_CAP, parse_concurrency
from .._standby import process_count
from ..formats import adk
from .journal import AgentJournal
from .loading import LoadedAgent, load_local_agent
from .remote import ServedAgent
from .reports import AgentProgressCallback, AgentRunReport
from .running import (
    DEFAULT_AGENT_CONCURRENCY,
    CaseContext,
    CaseExecutor,
    CaseSettings,
    execute_case,
)
from .source import AgentSource, Capabilities, OpenedAgent, RunSettings, open_agent, run_cases
from .tool_mocks import ToolMocks
from .workers import WorkerPool


class InProcessSource(AgentSource):
    kind = "an agent run here"
    capabilities = Capabilities(
        live=True, mock_tools=True, spans=True, processes=True, editable_instruction=True
    )

    def __init__(self, agent: str | Path | LoadedAgent, workers: WorkerPool | None = None) -> None:
        super().__init__(agent.spec if isinstance(agent, LoadedAgent) else str(agent))
        self.agent = agent
        #: Workers started already by the caller (``run_agent_cases``): used, not closed.
        self.workers = workers

    @classmethod
    def recognise(cls, agent: Any) -> AgentSource | None:
        if isinstance(agent, LoadedAgent | str | Path) and not isinstance(agent, ServedAgent):
            return cls(agent)
        return None

    async def load(self) -> LoadedAgent:
        """The agent the spec names, loaded here (a worker loads it as ``agents.load_agent``
        does)."""
        return await load_local_agent(self.spec)

    def case_settings(self, settings: RunSettings) -> CaseSettings:
        return CaseSettings(
            settings.num_runs,
            parse_concurrency(settings.concurrency) == AUTO,
            settings.user_simulator_config,
            settings.record_spans,
            settings.live,
        )

    @contextlib.asynccontextmanager
    async def opened(self, settings: RunSettings, runs: int) -> AsyncIterator[OpenedAgent]:
        case_settings = self.case_settings(settings)
        workers, started = self.workers, None
        if workers is None:
            # An agent loaded by the caller may hold what they set up in it: it runs here
            # only, unless they ask for processes, which load it again from its spec.
            in_place = isinstance(self.agent, LoadedAgent) and settings.processes == AUTO
            processes = 1 if in_place else process_count(settings.processes, runs)
            if processes == 1:
                _standby.release()  # workers the command started in case the run wanted them
            else:
                # Started first: the workers load the agent while this process does.
                workers = started = WorkerPool(self.spec, processes - 1, case_settings)
                await started.start()
        elif workers.settings != case_settings:
            # A worker's case would run otherwise than this process's: a session id, a
            # simulator or spans that differ by where the case ran.
            raise ValueError(
                f"the workers were started with {workers.settings}, not {case_settings}"
            )
        try:
            agent = self.agent if isinstance(self.agent, LoadedAgent) else await self.load()
            execute: CaseExecutor = functools.partial(
                execute_case, CaseContext.for_agent(agent, case_settings)
            )
            if workers is not None:
                execute = workers.executor(execute)
            yield OpenedAgent(agent.fingerprint, execute)
        finally:
            if started is not None:
                await started.close()


async def run_agent_cases(
    agent: LoadedAgent | str | Path,
    cases: Sequence[adk.EvalCase],
    *,
    num_runs: int = 1,
    concurrency: int | str = DEFAULT_AGENT_CONCURRENCY,
    max_concurrency: int = DEFAULT_CAP,
    user_simulator_config: dict[str, Any] | None = None,
    journal: AgentJournal | None = None,
    record_spans: bool = False,
    on_progress: AgentProgressCallback | None = None,
    tool_mocks: Callable[[adk.EvalCase], ToolMocks | None] | None = None,
    workers: WorkerPool | None = None,
    live: bool = False,
) -> AgentRunReport:
    """Runs every case ``num_runs`` times, ``concurrency`` runs at a time.

    A run that raises is reported with its error and the others go on. With a journal, each
    finished run is kept as it finishes, and runs an interrupted attempt finished are read
    back instead of being run again. With ``workers`` (started, ``agents.workers``), the cases
    run in those worker processes too, each with the agent loaded from its spec: the cases of
    every process share the one limit of cases at once. ``live``: each case as one live
    conversation (``Runner.run_live``).
    """
    settings = RunSettings(
        num_runs=num_runs,
        concurrency=parse_concurrency(concurrency),
        max_concurrency=max_concurrency,
        processes=1,  # this process, and the workers given
        user_simulator_config=user_simulator_config,
        record_spans=record_spans,
        live=live,
        tool_mocks=tool_mocks,
        resume=journal is not None,
        on_progress=on_progress,
    )
    source = open_agent(agent)
    if isinstance(source, InProcessSource):
        source.workers = workers
    report, _ = await run_cases(source, cases, settings, journal=journal)
    return report
