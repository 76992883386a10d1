"""Running an ADK agent on eval cases, as ``adk eval`` does, into sessions that ``traces``
reads like any session export. Needs google-adk (``pip install 'platform-eval[adk]'``)."""

from .journal import AgentJournal
from .loading import AdkMissingError, AgentLoadError, LoadedAgent, load_agent
from .reports import AgentProgress, AgentProgressCallback, AgentRunReport, CaseRun
from .running import (
    DEFAULT_AGENT_CONCURRENCY,
    AgentModelError,
    run_agent_cases,
    session_id_for,
)
from .source import AgentLike, AgentSource, Capabilities, RunSettings, open_agent, run_cases

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
