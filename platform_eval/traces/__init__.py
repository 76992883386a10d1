"""Completed traces -> AgentData, for offline evaluation. Pure functions, no network.

``load_conversations(path)`` reads an ADK session export, the event list of ADK's api_server
``/run``, or OpenTelemetry spans in any container ``containers`` reads (Jaeger, OTLP JSON,
JSONL or protobuf, Tempo, flat span lists, the console exporter's output) and any dialect
``dialects`` translates (ADK, the GenAI semantic conventions, OpenInference, ...);
``match_conversations`` pairs them with eval cases.
"""

from pathlib import Path
from typing import Any

from ..formats._problems import FormatError, Problem
from ..formats.load import TRACE_KINDS, Kind, check_file_size, detect, read_data
from ._conversation import Conversation
from .adk_session import session_to_conversation
from .containers import Span, SpanEvent, spans_from_data, spans_from_protobuf
from .matching import Match, MatchReport, match_conversations
from .otel import spans_to_conversations

#: Suffixes of OTLP protobuf files (``ExportTraceServiceRequest`` bytes).
PROTOBUF_SUFFIXES = (".pb", ".binpb", ".protobuf")


def load_conversations(path: str | Path) -> list[Conversation]:
    """Every conversation recorded in a session export, an event list or a trace file."""
    source = str(path)
    if Path(path).suffix.lower() in PROTOBUF_SUFFIXES:
        try:
            check_file_size(Path(path))
            payload = Path(path).read_bytes()
        except OSError as exc:
            raise FormatError([Problem(source, "$", f"cannot read: {exc}")]) from None
        return spans_to_conversations(spans_from_protobuf(payload, source), source)
    data = read_data(path)
    return conversations_from(data, detect(data), source)


def conversations_from(data: Any, kind: Kind | None, source: str) -> list[Conversation]:
    """``load_conversations`` for a file already read: its parsed data and its kind."""
    if kind == Kind.SESSION:
        return [session_to_conversation(data, source=source)]
    if kind == Kind.ADK_EVENTS:
        return [session_to_conversation({"id": Path(source).stem, "events": data}, source=source)]
    if kind in TRACE_KINDS:
        return spans_to_conversations(spans_from_data(data, source), source)
    raise FormatError(
        [
            Problem(
                source,
                "$",
                "expected an ADK session export or /run event list, or OpenTelemetry traces "
                "(Jaeger, OTLP JSON/JSONL/protobuf, Tempo, a list of spans)",
            )
        ]
    )


__all__ = [
    "PROTOBUF_SUFFIXES",
    "Conversation",
    "Match",
    "MatchReport",
    "Span",
    "SpanEvent",
    "conversations_from",
    "load_conversations",
    "match_conversations",
    "session_to_conversation",
    "spans_from_data",
    "spans_from_protobuf",
    "spans_to_conversations",
]
