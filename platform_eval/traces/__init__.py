"""Completed traces -> AgentData, for offline evaluation. Pure functions, no network.

``load_conversations(path)`` reads an ADK session export, the event list of ADK's api_server
``/run``, or OpenTelemetry spans in any container ``containers`` reads (Jaeger, OTLP JSON,
JSONL or protobuf, Tempo, flat span lists, the console exporter's output) and any dialect
``dialects`` translates (ADK, the GenAI semantic conventions, OpenInference, ...);
``load_traces(paths)`` reads several files (or directories of them) as one recording, so the
traces of one session, or spans and the log records that carry their content, may sit in
different files. ``match_conversations`` pairs them with eval cases.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..formats._problems import FormatError, Problem, problems_from_validation
from ..formats.dataset import EvaluationDataset
from ..formats.load import TRACE_KINDS, Kind, detect, read_data
from ..formats.reading import max_file_bytes, read_bytes
from ._conversation import Conversation
from .adk_session import session_to_conversation
from .containers import (
    LogRecord,
    Records,
    Span,
    SpanEvent,
    records_from_data,
    records_from_protobuf,
    spans_from_data,
    spans_from_protobuf,
)
from .matching import Match, MatchReport, match_conversations
from .otel import spans_to_conversations

#: Suffixes of OTLP protobuf files (``ExportTraceServiceRequest`` bytes).
PROTOBUF_SUFFIXES = (".pb", ".binpb", ".protobuf")


_SPAN_KINDS = (Kind.JAEGER_TRACES, Kind.OTLP_TRACES, Kind.SPAN_LIST)

#: Suffixes a directory of traces is read for.
TRACE_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml", *PROTOBUF_SUFFIXES)


def load_conversations(path: str | Path) -> list[Conversation]:
    """Every conversation recorded in a session export, an event list or a trace file."""
    return load_traces([path])


def folder_files(folder: Path) -> list[Path]:
    """Everything under ``folder`` but folders, sorted, leaving out hidden files and folders
    (``.platform-eval``'s manifests and store, ``.git``, a ``.venv``): not recordings."""
    return sorted(
        p
        for p in folder.rglob("*")
        if not p.is_dir() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def trace_files(paths: Sequence[str | Path]) -> list[Path]:
    """The files named, with each directory replaced by the trace files under it, sorted."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += [
                p for p in folder_files(path) if p.is_file() and p.suffix.lower() in TRACE_SUFFIXES
            ]
        else:
            found.append(path)
    return found


def load_traces(sources: Sequence[str | Path | Conversation]) -> list[Conversation]:
    """Every conversation in these files, read as one recording; conversations already read
    (``Conversation`` objects among the sources) are kept as they are, first.

    Session exports and event lists are conversations of their own. The spans and log records
    of all trace files are read together: a session's traces are one conversation whichever
    file holds them, and log records find their spans in another file. Raises FormatError for
    a file that is none of these, or trace files that hold no conversation.
    """
    conversations = [s for s in sources if isinstance(s, Conversation)]
    records = Records()
    sources_read: list[str] = []
    paths = [s for s in sources if not isinstance(s, Conversation)]
    for path in trace_files(paths):
        source = str(path)
        if path.suffix.lower() in PROTOBUF_SUFFIXES:
            payload = read_bytes(path, max_file_bytes())
            records.extend(records_from_protobuf(payload, source))
            sources_read.append(source)
            continue
        data = read_data(path)
        kind = detect(data)
        if kind in _SPAN_KINDS:
            records.extend(records_from_data(data, source))
            sources_read.append(source)
        else:
            conversations += conversations_from(data, kind, source)
    if sources_read:
        conversations += _span_conversations(records, ", ".join(sources_read))
    return conversations


def _span_conversations(records: Records, source: str) -> list[Conversation]:
    spans, orphans = records.joined()
    if not spans and orphans:
        raise FormatError(
            [
                Problem(
                    source,
                    "$",
                    f"{len(orphans)} log records and no spans: log records carry content for "
                    "the spans they were emitted in, so pass the file of those spans too",
                )
            ]
        )
    conversations = spans_to_conversations(spans, source)
    if orphans:
        for conversation in conversations:
            conversation.notes.append(
                f"{len(orphans)} log records were emitted in spans that are in none of the "
                "files read; what they carry is not used"
            )
    return conversations


def dataset_conversations(data: Any, source: str) -> list[Conversation]:
    """The agent's answers an EvaluationDataset holds (an agents-cli trace file, as ``eval
    generate`` writes it): one conversation per graded case, named by its case."""
    try:
        dataset = EvaluationDataset.model_validate(data)
    except ValidationError as error:
        raise FormatError(problems_from_validation(error, source)) from None
    found = []
    for index, case in enumerate(dataset.eval_cases):
        agent_data = case.candidate_agent_data()
        if agent_data is not None:
            found.append(Conversation(case.eval_case_id or f"case-{index}", agent_data, source))
    if not found:
        raise FormatError(
            [
                Problem(
                    source,
                    "$.eval_cases",
                    "an EvaluationDataset whose cases hold no agent answers (no `responses`): "
                    "golden cases, not traces; run the agent on them (--agent) or pass the trace "
                    "file agents-cli's `eval generate` wrote",
                )
            ]
        )
    return found


def conversations_from(data: Any, kind: Kind | None, source: str) -> list[Conversation]:
    """``load_conversations`` for a file already read: its parsed data and its kind."""
    if kind == Kind.SESSION:
        return [session_to_conversation(data, source=source)]
    if kind == Kind.ADK_EVENTS:
        return [session_to_conversation({"id": Path(source).stem, "events": data}, source=source)]
    if kind in TRACE_KINDS:
        return _span_conversations(records_from_data(data, source), source)
    if kind == Kind.DATASET:
        return dataset_conversations(data, source)
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
    "TRACE_SUFFIXES",
    "Conversation",
    "LogRecord",
    "Match",
    "MatchReport",
    "Records",
    "Span",
    "SpanEvent",
    "conversations_from",
    "folder_files",
    "load_conversations",
    "load_traces",
    "match_conversations",
    "records_from_data",
    "records_from_protobuf",
    "session_to_conversation",
    "spans_from_data",
    "spans_from_protobuf",
    "spans_to_conversations",
    "trace_files",
]
