"""Trace files -> one span model, whatever container the spans came in.

Read here: Jaeger JSON (``{"data": [{"traceID", "spans"}]}``); OTLP JSON (``{"resourceSpans"}``,
one object, a list of them or one per line) and OTLP protobuf (``ExportTraceServiceRequest``
bytes, with the ``opentelemetry-proto`` package); OTLP log records (``{"resourceLogs"}``), which
become events of the span they were emitted in (ADK 2.x records message content there by
default); Grafana Tempo's ``{"batches"}`` and
``{"trace": ...}``; flat span lists (ADK's dev-UI ``/debug/trace``, VeADK and Strands Evals
dumps, the OpenTelemetry console exporter's objects, AWS ADOT ``{"session_id", "spans"}``, rows
of the collector's ClickHouse ``otel_traces`` table).

Span ids are normalized to lowercase hex so that parents are found whichever way an exporter
wrote them (hex, ``0x`` hex, base64, decimal integers). A span printed twice (the console
exporter does) is kept once.
"""

from __future__ import annotations

import base64
import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..formats._problems import FormatError, Problem
from ..formats.load import is_flat_span


@dataclass(frozen=True)
class SpanEvent:
    name: str
    attributes: dict[str, Any]
    time_ns: int = 0


@dataclass(frozen=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    attributes: dict[str, Any]
    events: tuple[SpanEvent, ...] = field(default=())
    #: When the span ended (0 when the file does not say): a tool's answer comes then.
    end_ns: int = 0

    @property
    def operation(self) -> str:
        return str(self.attributes.get("gen_ai.operation.name") or self.name.split(" ", 1)[0])


@dataclass(frozen=True)
class LogRecord:
    """An OTLP log record emitted inside a span: an event of that span, written apart from it."""

    trace_id: str
    span_id: str
    event: SpanEvent


@dataclass
class Records:
    """What trace files hold: spans, and log records that belong to them."""

    spans: list[Span] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)

    def extend(self, other: Records) -> None:
        self.spans.extend(other.spans)
        self.logs.extend(other.logs)

    def joined(self) -> tuple[list[Span], list[LogRecord]]:
        """Every span once, each with the events of its log records; and the log records whose
        span is not among the spans."""
        seen: set[tuple[str, str]] = set()
        spans = []
        for span in self.spans:
            key = (span.trace_id, span.span_id)
            if key not in seen:
                seen.add(key)
                spans.append(span)
        by_span: dict[tuple[str, str], list[SpanEvent]] = {}
        orphans = []
        for log in self.logs:
            key = (log.trace_id, log.span_id)
            if key in seen:
                by_span.setdefault(key, []).append(log.event)
            else:
                orphans.append(log)
        if by_span:
            spans = [
                dataclasses.replace(s, events=(*s.events, *by_span[key]))
                if (key := (s.trace_id, s.span_id)) in by_span
                else s
                for s in spans
            ]
        return spans, orphans


# -- ids and times -----------------------------------------------------------------------------


def _hex_id(value: Any, width: int) -> str:
    """An id as lowercase hex: from hex, ``0x`` hex, base64 (Tempo) or a decimal integer."""
    if value is None or value == "":
        return ""
    if isinstance(value, int):
        return f"{value:0{width}x}"
    text = str(value).strip()
    if text.lower().startswith("0x"):
        return text[2:].lower()
    if all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    if len(text) % 4 == 0:
        try:
            return base64.b64decode(text, validate=True).hex()
        except ValueError:
            pass
    return text  # an id of another kind (a test's "llm-1"): kept as written


def _time_ns(value: Any) -> int:
    """Nanoseconds since the epoch from an integer (ns, us or s), a float (s) or ISO 8601."""
    if value is None or isinstance(value, bool):
        return 0
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())  # an OTLP uint64 in a string: exact, not through a float
    if isinstance(value, int):
        if value > 10**17:
            return value  # nanoseconds
        if value > 10**14:
            return value * 1000  # microseconds
        if value > 10**11:
            return value * 10**6  # milliseconds (no second count is that large)
        return value * 10**9  # seconds
    if isinstance(value, float):
        return _seconds_to_ns(value)
    text = str(value).strip()
    try:
        return _seconds_to_ns(float(text))
    except ValueError:
        pass
    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1e9)
    except (ValueError, OverflowError, OSError):
        return 0


def _seconds_to_ns(seconds: float) -> int:
    # Infinite, NaN or absurd times are no times: they must not break the ordering of spans.
    if not math.isfinite(seconds) or abs(seconds) > 1e11:
        return 0
    return int(seconds * 1e9)


# -- OTLP (JSON) and Jaeger --------------------------------------------------------------------


def _otlp_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "string_value", "bool_value"):
        if key in value:
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            return _int(value[key])
    array = value.get("arrayValue") or value.get("array_value")
    if isinstance(array, dict) and isinstance(array.get("values"), list):
        return [_otlp_value(v) for v in array["values"]]
    kvlist = value.get("kvlistValue") or value.get("kvlist_value")
    if isinstance(kvlist, dict) and isinstance(kvlist.get("values"), list):
        return _otlp_attributes(kvlist["values"])
    return None


def _int(value: Any) -> Any:
    """An OTLP int64 (often a string); kept as written when it is not one."""
    if isinstance(value, int) or not isinstance(value, str | float):
        return value
    try:
        return int(value)
    except (ValueError, OverflowError):
        return value


def _otlp_attributes(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, list):
        return raw if isinstance(raw, dict) else {}
    return {
        a["key"]: _otlp_value(a.get("value"))
        for a in raw
        if isinstance(a, dict) and isinstance(a.get("key"), str)
    }


def _objects(value: Any, source: str | None, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The objects of the JSON list at ``path`` (none for a missing one), or a FormatError
    naming the first entry that is not an object."""
    if value is None:
        return
    if not isinstance(value, list):
        raise FormatError([Problem(source, path, f"expected a list, found {_kind(value)}")])
    for index, entry in enumerate(value):
        where = f"{path}[{index}]"
        if not isinstance(entry, dict):
            raise FormatError([Problem(source, where, f"expected an object, found {_kind(entry)}")])
        yield where, entry


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else "null"
    )


def _field(raw: dict[str, Any], *keys: str) -> tuple[str, Any]:
    """The first of ``keys`` present in ``raw`` (and its value), for paths in errors."""
    for key in keys:
        if raw.get(key):
            return key, raw[key]
    return keys[0], None


def _otlp_spans(resource_spans: Any, source: str | None, path: str) -> Iterator[Span]:
    for resource_path, resource in _objects(resource_spans, source, path):
        key, scopes = _field(resource, "scopeSpans", "scope_spans", "instrumentationLibrarySpans")
        for scope_path, scope in _objects(scopes, source, f"{resource_path}.{key}"):
            for _, raw in _objects(scope.get("spans"), source, f"{scope_path}.spans"):
                yield Span(
                    trace_id=_hex_id(raw.get("traceId") or raw.get("trace_id"), 32),
                    span_id=_hex_id(raw.get("spanId") or raw.get("span_id"), 16),
                    parent_id=_hex_id(raw.get("parentSpanId") or raw.get("parent_span_id"), 16)
                    or None,
                    name=str(raw.get("name") or ""),
                    start_ns=_time_ns(
                        raw.get("startTimeUnixNano") or raw.get("start_time_unix_nano")
                    ),
                    end_ns=_time_ns(raw.get("endTimeUnixNano") or raw.get("end_time_unix_nano")),
                    attributes=_otlp_attributes(raw.get("attributes")),
                    events=_flat_events(raw.get("events")),
                )


def _otlp_logs(resource_logs: Any, source: str | None, path: str) -> Iterator[LogRecord]:
    for resource_path, resource in _objects(resource_logs, source, path):
        key, scopes = _field(resource, "scopeLogs", "scope_logs", "instrumentationLibraryLogs")
        for scope_path, scope in _objects(scopes, source, f"{resource_path}.{key}"):
            records_key, records = _field(scope, "logRecords", "log_records")
            for _, raw in _objects(records, source, f"{scope_path}.{records_key}"):
                span_id = _hex_id(raw.get("spanId") or raw.get("span_id"), 16)
                if not span_id:
                    continue  # a log outside any span is no part of a trace
                attributes = _otlp_attributes(raw.get("attributes"))
                body = _otlp_value(raw.get("body"))
                if body is not None:
                    attributes.setdefault("body", body)
                name = _first(raw, "eventName", "event_name") or attributes.get("event.name")
                when = _first(raw, "timeUnixNano", "time_unix_nano", "observedTimeUnixNano")
                yield LogRecord(
                    trace_id=_hex_id(raw.get("traceId") or raw.get("trace_id"), 32),
                    span_id=span_id,
                    event=SpanEvent(
                        str(name or ""),
                        attributes,
                        _time_ns(when),
                    ),
                )


def _jaeger_fields(raw: Any) -> dict[str, Any]:
    """Jaeger tags or log fields (``[{"key", "type", "value"}]``) as a dict."""
    if not isinstance(raw, list):
        return {}
    return {
        f["key"]: f.get("value")
        for f in raw
        if isinstance(f, dict) and isinstance(f.get("key"), str)
    }


def _jaeger_spans(traces: Any, source: str | None, path: str) -> Iterator[Span]:
    for trace_path, trace in _objects(traces, source, path):
        for _, raw in _objects(trace.get("spans"), source, f"{trace_path}.spans"):
            references = raw.get("references")
            parents = [
                r.get("spanID")
                for r in (references if isinstance(references, list) else [])
                if isinstance(r, dict) and r.get("refType", "CHILD_OF") == "CHILD_OF"
            ]
            events = []
            logs = raw.get("logs")
            for log in logs if isinstance(logs, list) else []:
                if isinstance(log, dict):
                    fields = _jaeger_fields(log.get("fields"))
                    name = fields.pop("event", "")
                    events.append(SpanEvent(str(name), fields, _time_us(log.get("timestamp"))))
            yield Span(
                trace_id=_hex_id(raw.get("traceID") or trace.get("traceID"), 32),
                span_id=_hex_id(raw.get("spanID"), 16),
                parent_id=_hex_id(parents[0], 16) if parents else None,
                name=str(raw.get("operationName") or ""),
                start_ns=_time_us(raw.get("startTime")),
                end_ns=_jaeger_end(raw),
                attributes=_jaeger_fields(raw.get("tags")),
                events=tuple(events),
            )


def _time_us(value: Any) -> int:
    """Jaeger's microseconds since the epoch, in nanoseconds (0 when it is not a number)."""
    number = _int(value)
    return number * 1000 if isinstance(number, int) and not isinstance(number, bool) else 0


def _jaeger_end(raw: dict[str, Any]) -> int:
    """Jaeger writes a start and a duration (microseconds); 0 when either is missing."""
    start, duration = _time_us(raw.get("startTime")), _time_us(raw.get("duration"))
    return start + duration if start and duration else 0


# -- flat span lists ---------------------------------------------------------------------------


def _first(raw: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if raw.get(key) not in (None, ""):
            return raw[key]
    return None


def _flat_events(raw: Any) -> tuple[SpanEvent, ...]:
    events = []
    for event in raw if isinstance(raw, list) else []:
        if not isinstance(event, dict):
            continue
        attributes = event.get("attributes")
        if isinstance(attributes, list):
            attributes = _otlp_attributes(attributes)
        events.append(
            SpanEvent(
                str(_first(event, "name", "event_name", "eventName") or ""),
                attributes if isinstance(attributes, dict) else {},
                _time_ns(_first(event, "timestamp", "time", "time_unix_nano", "timeUnixNano")),
            )
        )
    return tuple(events)


def _flat_span(raw: dict[str, Any]) -> Span:
    if "SpanName" in raw:
        return _table_row_span(raw)
    found = raw.get("context")
    context: dict[str, Any] = found if isinstance(found, dict) else {}
    parent = raw.get("parent")
    parent_id = _first(raw, "parent_span_id", "parentSpanId", "parent_id", "parentId")
    if parent_id is None and isinstance(parent, dict):
        parent_id = parent.get("span_id")
    attributes = raw.get("attributes")
    if isinstance(attributes, list):
        attributes = _otlp_attributes(attributes)
    return Span(
        trace_id=_hex_id(
            _first(raw, "trace_id", "traceId", "traceID") or context.get("trace_id"), 32
        ),
        span_id=_hex_id(_first(raw, "span_id", "spanId", "spanID") or context.get("span_id"), 16),
        parent_id=_hex_id(parent_id, 16) or None,
        name=str(raw.get("name") or ""),
        start_ns=_time_ns(_first(raw, "start_time", "startTime", "startTimeUnixNano")),
        end_ns=_time_ns(_first(raw, "end_time", "endTime", "endTimeUnixNano")),
        attributes=attributes if isinstance(attributes, dict) else {},
        events=_flat_events(_first(raw, "span_events", "events")),
    )


def _table_row_span(raw: dict[str, Any]) -> Span:
    """A row of the OpenTelemetry Collector's ClickHouse ``otel_traces`` table, as exported
    (agntcy's observability stack, SigNoz-style stores): ``SpanName``, ``SpanAttributes``, a
    start ``Timestamp`` and a ``Duration`` in nanoseconds; the events as parallel columns
    (``Events.Name``, ``Events.Timestamp``, ``Events.Attributes``) or as ``Events`` objects."""
    start = _time_ns(raw.get("Timestamp"))
    duration = _int(raw.get("Duration"))
    attributes = raw.get("SpanAttributes")
    return Span(
        trace_id=_hex_id(raw.get("TraceId"), 32),
        span_id=_hex_id(raw.get("SpanId"), 16),
        parent_id=_hex_id(raw.get("ParentSpanId"), 16) or None,
        name=str(raw.get("SpanName") or ""),
        start_ns=start,
        end_ns=start + duration if start and isinstance(duration, int) and duration > 0 else 0,
        attributes=attributes if isinstance(attributes, dict) else {},
        events=_table_row_events(raw),
    )


def _table_row_events(raw: dict[str, Any]) -> tuple[SpanEvent, ...]:
    if isinstance(raw.get("Events"), list):
        return _flat_events(
            [
                {k.lower(): v for k, v in event.items()} if isinstance(event, dict) else event
                for event in raw["Events"]
            ]
        )
    names, times, attributes = (
        value if isinstance(value := raw.get(f"Events.{column}"), list) else []
        for column in ("Name", "Timestamp", "Attributes")
    )
    return tuple(
        SpanEvent(
            str(name or ""),
            attributes[i] if i < len(attributes) and isinstance(attributes[i], dict) else {},
            _time_ns(times[i]) if i < len(times) else 0,
        )
        for i, name in enumerate(names)
    )


# -- every container ---------------------------------------------------------------------------

CONTAINERS = (
    "Jaeger JSON (data[].spans), OTLP JSON (resourceSpans, resourceLogs), Tempo (batches or "
    "trace), or a list of spans (name, span_id, trace_id, attributes)"
)


def _records(data: Any, source: str | None, path: str) -> Iterator[Span | LogRecord]:
    if isinstance(data, list):
        for index, entry in enumerate(data):
            yield from _records(entry, source, f"{path}[{index}]")
        return
    if is_flat_span(data):
        yield _flat_span(data)
        return
    if not isinstance(data, dict):
        raise FormatError([Problem(source, path, f"expected {CONTAINERS}")])
    if not any(k in data for k in _CONTAINER_KEYS) and isinstance(data.get("trace"), dict):
        yield from _records(data["trace"], source, f"{path}.trace")
        return
    found = False
    if "resourceSpans" in data or "resource_spans" in data:
        key, resource_spans = _field(data, "resourceSpans", "resource_spans")
        yield from _otlp_spans(resource_spans, source, f"{path}.{key}")
        found = True
    if "resourceLogs" in data or "resource_logs" in data:
        # The collector's file exporter may write both signals to one file, even one line.
        key, resource_logs = _field(data, "resourceLogs", "resource_logs")
        yield from _otlp_logs(resource_logs, source, f"{path}.{key}")
        found = True
    if found:
        return
    if "batches" in data:
        yield from _otlp_spans(data["batches"], source, f"{path}.batches")
    elif isinstance(data.get("data"), list):
        yield from _jaeger_spans(data["data"], source, f"{path}.data")
    elif isinstance(data.get("spans"), list):
        yield from _records(data["spans"], source, f"{path}.spans")
    else:
        raise FormatError([Problem(source, path, f"expected {CONTAINERS}")])


_CONTAINER_KEYS = ("resourceSpans", "resource_spans", "resourceLogs", "resource_logs", "batches")


def records_from_data(data: Any, source: str | None = None) -> Records:
    """The spans and log records of a parsed trace file, in the order they were written."""
    records = Records()
    for record in _records(data, source, "$"):
        if isinstance(record, Span):
            records.spans.append(record)
        else:
            records.logs.append(record)
    return records


def spans_from_data(data: Any, source: str | None = None) -> list[Span]:
    """Every span of a parsed trace file, once each, in the order they were written, with the
    events of the file's log records emitted in it."""
    spans, _ = records_from_data(data, source).joined()
    return spans


def records_from_protobuf(
    payload: bytes, source: str | None = None, *, logs: bool = False
) -> Records:
    """The spans of an OTLP ``ExportTraceServiceRequest`` (or ``TracesData``) in protobuf bytes,
    or with ``logs`` the log records of an ``ExportLogsServiceRequest``: the bytes do not say
    which they are, the endpoint or the file they came by does."""
    return records_from_data(otlp_json_from_protobuf(payload, source, logs=logs), source)


def otlp_json_from_protobuf(
    payload: bytes, source: str | None = None, *, logs: bool = False
) -> dict[str, Any]:
    """An OTLP protobuf export (``records_from_protobuf``) in OTLP JSON."""
    try:
        from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
        from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
        )
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError:
        raise FormatError(
            [
                Problem(
                    source,
                    "$",
                    "OTLP protobuf needs the opentelemetry-proto package: "
                    "pip install opentelemetry-proto",
                )
            ]
        ) from None
    request = ExportLogsServiceRequest() if logs else ExportTraceServiceRequest()
    try:
        request.ParseFromString(payload)
    except DecodeError as exc:
        raise FormatError([Problem(source, "$", f"not OTLP protobuf: {exc}")]) from None
    # MessageToDict writes ids base64-encoded, as OTLP JSON's proto3 mapping does.
    data: dict[str, Any] = MessageToDict(request)
    return data


def spans_from_protobuf(payload: bytes, source: str | None = None) -> list[Span]:
    """Spans of an OTLP ``ExportTraceServiceRequest`` (or ``TracesData``) in protobuf bytes."""
    spans, _ = records_from_protobuf(payload, source).joined()
    return spans
