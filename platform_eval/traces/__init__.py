"""Completed traces -> AgentData, for offline evaluation. Pure functions, no network.

``load_conversations(path)`` reads an ADK session export, or OpenTelemetry spans as Jaeger
JSON, OTLP JSON / JSONL, or Tempo ``batches``; ``match_conversations`` pairs them with eval
cases.
"""

from pathlib import Path

from ..formats._problems import FormatError, Problem
from ..formats.load import Kind, detect, read_data
from ._conversation import Conversation
from .adk_session import session_to_conversation
from .matching import Match, MatchReport, match_conversations
from .otel import Span, spans_from_data, spans_to_conversations


def load_conversations(path: str | Path) -> list[Conversation]:
    """Every conversation recorded in a session export or a trace file."""
    data = read_data(path)
    kind = detect(data)
    source = str(path)
    if kind == Kind.SESSION:
        return [session_to_conversation(data, source=source)]
    if kind in (Kind.JAEGER_TRACES, Kind.OTLP_TRACES):
        return spans_to_conversations(spans_from_data(data, source), source)
    raise FormatError(
        [
            Problem(
                source,
                "$",
                "expected an ADK session export or OpenTelemetry traces (Jaeger, OTLP, Tempo)",
            )
        ]
    )


__all__ = [
    "Conversation",
    "Match",
    "MatchReport",
    "Span",
    "load_conversations",
    "match_conversations",
    "session_to_conversation",
    "spans_from_data",
    "spans_to_conversations",
]
