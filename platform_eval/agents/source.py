"""The agent under test, wherever it lives: one interface, the wing's front door.

``open_agent(agent)`` is the one recogniser of what names an agent (a folder, an ``agent.py``,
``module:attribute``, an agent loaded already, an A2A agent card's URL, an ADK api_server's
URL, an Agent Runtime's resource name or URL): it answers the ``AgentSource`` of the place
the agent lives, without loading or connecting anything. Each place is one module (``_PLACES``:
a new one is one module and one line there), each says what it can do (``Capabilities``,
checked once, by the plan, before anything runs) and how to open it (``AgentSource.opened``:
loaded, connected, its fingerprint and how one case runs on it). ``run_cases`` is the one
scheduler of every source: the cases at once, the journal and resume, the progress.

The contract between a source and the readers above it is ADK's session JSON
(``CaseRun.session``): every source gives its runs' sessions in the shape ``adk eval`` saves
them, which ``traces`` reads like any session export.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .._adaptive import AUTO, DEFAULT_CAP
from .._gc import settle_for_cases
from ..formats import adk
from .journal import AgentJournal
from .loading import LoadedAgent
from .remote import ServedAgent
from .reports import AgentProgressCallback, AgentRunReport
from .running import schedule

if TYPE_CHECKING:
    from .running import CaseExecutor
    from .tool_mocks import ToolMocks


@dataclass(frozen=True)
class Capabilities:
    """What a place an agent lives can do; the plan refuses what it cannot, in one line."""

    #: Each case as one live (bidi) conversation (``agent_mode="live"``).
    live: bool = False
    #: Tool calls answered here instead of run (``mock_tools``): the tools run in this process.
    mock_tools: bool = False
    #: OpenTelemetry spans recorded here (``save_traces``): the agent runs in this process.
    spans: bool = False
    #: Cases spread over worker processes (``processes``), each loading the agent itself.
    processes: bool = False
    #: Its instructions can be rewritten and the agent run again (``optimize``).
    editable_instruction: bool = False


@dataclass(frozen=True)
class RunSettings:
    """How every case of one evaluation runs, on any source."""

    num_runs: int = 1
    #: Cases at once: "auto" (adapted to the quota, up to ``max_concurrency``) or a number.
    concurrency: int | str = AUTO
    max_concurrency: int = DEFAULT_CAP
    #: Processes the cases run in, where the source can spread them ("auto" or a number).
    processes: int | str = AUTO
    user_simulator_config: dict[str, Any] | None = None
    record_spans: bool = False
    live: bool = False
    #: Each case's tool answers (``tool_mocks.plan_mocks``), None for the real tools.
    tool_mocks: Callable[[adk.EvalCase], ToolMocks | None] | None = None
    #: What else decides the runs, for the journal: a resumed run is one of the same kind.
    decided_by: Mapping[str, Any] = field(default_factory=dict)
    #: Keep finished runs as they finish, so that an interrupted evaluation resumes.
    resume: bool = True
    on_progress: AgentProgressCallback | None = None


@dataclass
class OpenedAgent:
    """A source loaded or connected: what identifies the agent (a redeploy or an edit of its
    code is another agent, whose runs are not resumed) and how one case runs on it."""

    fingerprint: str
    execute: CaseExecutor


class AgentSource(ABC):
    """One place an agent lives. Subclasses say what they ``recognise``, what they can do and
    how they open; ``run_cases`` runs the cases on any of them."""

    #: How messages name the place ("an A2A peer").
    kind: ClassVar[str]
    capabilities: ClassVar[Capabilities]

    def __init__(self, spec: str) -> None:
        #: Where the agent is, as messages and the journal name it.
        self.spec = spec

    @classmethod
    @abstractmethod
    def recognise(cls, agent: Any) -> AgentSource | None:
        """This place's source for ``agent``, or None when ``agent`` names another place."""

    @abstractmethod
    def opened(self, settings: RunSettings, runs: int) -> AbstractAsyncContextManager[OpenedAgent]:
        """The agent loaded or connected for ``runs`` runs of cases; closed after them."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"


#: What names an agent: its folder, its ``agent.py``, ``module:attribute``, the agent loaded
#: already, a served agent (its URL, or a ``ServedAgent`` with its app and headers), an A2A
#: agent card's URL, or a source opened already.
AgentLike = str | Path | LoadedAgent | ServedAgent | AgentSource


#: Every place an agent lives, asked in this order (a module of this package and its source
#: class): a new one is one module and one line here.
_PLACES = (
    "a2a:A2APeerSource",
    "agent_runtime:AgentRuntimeSource",
    "served:ApiServerSource",
    "in_process:InProcessSource",  # last: a folder, a file, module:attribute, a loaded agent
)


def open_agent(agent: AgentLike) -> AgentSource:
    """The source of the place ``agent`` names (see the module); nothing is loaded or
    connected. ValueError for what names no agent."""
    if isinstance(agent, AgentSource):
        return agent
    for place in _PLACES:
        module, _, name = place.partition(":")
        source_class: type[AgentSource] = getattr(
            importlib.import_module(f"{__package__}.{module}"), name
        )
        found = source_class.recognise(agent)
        if found is not None:
            return found
    raise ValueError(f"agent {agent!r}: names no agent (a folder, a file, a URL, an agent)")


async def run_cases(
    source: AgentSource,
    cases: Sequence[adk.EvalCase],
    settings: RunSettings,
    *,
    journal: AgentJournal | None = None,
) -> tuple[AgentRunReport, AgentJournal | None]:
    """Every case ``settings.num_runs`` times on ``source``, as many at once as the limit
    allows, each finished run kept in the journal (made here from the agent's fingerprint
    unless one is given, none when ``settings.resume`` is off)."""
    if settings.num_runs < 1:
        raise ValueError(f"num_runs must be at least 1, got {settings.num_runs}")
    async with source.opened(settings, len(cases) * settings.num_runs) as opened:
        # What every source runs on is loaded now (google-adk, the agent or its connection).
        settle_for_cases()
        if journal is None and settings.resume:
            journal = AgentJournal(
                agent_fingerprint=opened.fingerprint,
                agent_spec=source.spec,
                settings=dict(settings.decided_by),
            )
        report = await schedule(
            opened.execute,
            cases,
            settings.num_runs,
            settings.concurrency,
            settings.max_concurrency,
            journal,
            settings.record_spans,
            settings.on_progress,
            settings.tool_mocks,
        )
    return report, journal
