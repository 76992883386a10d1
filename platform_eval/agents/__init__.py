"""Running an ADK agent on eval cases, as ``adk eval`` does, into sessions that ``traces``
reads like any session export. Needs google-adk (``pip install 'platform-eval[adk]'``)."""

from pathlib import Path

from .a2a import a2a_peer
from .in_process import run_agent_cases
from .journal import AgentJournal
from .loading import AdkMissingError, AgentLoadError, LoadedAgent, load_local_agent
from .remote import is_a2a_card
from .reports import AgentProgress, AgentProgressCallback, AgentRunReport, CaseRun
from .running import (
    DEFAULT_AGENT_CONCURRENCY,
    AgentModelError,
    session_id_for,
)
from .source import AgentLike, AgentSource, Capabilities, RunSettings, open_agent, run_cases


async def load_agent(spec: str | Path) -> LoadedAgent:
    """The agent ``spec`` names: an agent folder, an ``agent.py`` file, ``module:attr``, or an
    A2A peer's agent card URL."""
    return await (a2a_peer(str(spec)) if is_a2a_card(spec) else load_local_agent(spec))


__all__ = [
    "DEFAULT_AGENT_CONCURRENCY",
    "AdkMissingError",
    "AgentJournal",
    "AgentLike",
    "AgentLoadError",
    "AgentModelError",
    "AgentProgress",
    "AgentProgressCallback",
    "AgentRunReport",
    "AgentSource",
    "Capabilities",
    "CaseRun",
    "LoadedAgent",
    "RunSettings",
    "load_agent",
    "open_agent",
    "run_agent_cases",
    "run_cases",
    "session_id_for",
]
