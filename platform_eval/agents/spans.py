"""The OpenTelemetry spans an agent's run emits (google-adk's own telemetry), kept per run and
written as OTLP JSON, the format of OpenTelemetry's file exporter, which ``--traces`` reads.

A span belongs to the run whose task started it: a context variable set around each run is
read when the span starts, so runs going on at once never mix their spans.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

_RUN: contextvars.ContextVar[str | None] = contextvars.ContextVar("platform_eval_run", default=None)


class SpanRecorder(SpanProcessor):
    """A span processor on the global tracer provider (one is set up when there is none)."""

    _installed: ClassVar[SpanRecorder | None] = None
    _install_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: dict[int, str] = {}
        self._spans: dict[str, list[Any]] = {}

    @classmethod
    def install(cls) -> SpanRecorder:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider

        with cls._install_lock:
            if cls._installed is not None:
                return cls._installed
            provider = trace.get_tracer_provider()
            if not isinstance(provider, TracerProvider):
                provider = TracerProvider()
                trace.set_tracer_provider(provider)
                provider = trace.get_tracer_provider()
            if not isinstance(provider, TracerProvider):
                raise RuntimeError(
                    "the global OpenTelemetry tracer provider is not the SDK's, and it cannot be "
                    "replaced: spans cannot be recorded (--save-traces)"
                )
            recorder = cls()
            provider.add_span_processor(recorder)
            cls._installed = recorder
            return recorder

    @contextlib.contextmanager
    def scope(self, run: str) -> Iterator[None]:
        with self._lock:
            self._spans[run] = []
        token = _RUN.set(run)
        try:
            yield
        finally:
            _RUN.reset(token)

    def take(self, run: str) -> dict[str, Any]:
        with self._lock:
            spans = self._spans.pop(run, [])
        return otlp_json(spans)

    # -- the SpanProcessor interface ----------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        run = _RUN.get()
        if run is not None:
            with self._lock:
                self._owner[span.context.span_id] = run

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            run = self._owner.pop(span.context.span_id, None)
            if run is not None and run in self._spans:
                self._spans[run].append(span)


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attributes(attributes: Any) -> list[dict[str, Any]]:
    return [{"key": str(k), "value": _value(v)} for k, v in dict(attributes or {}).items()]


def _span(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": f"{span.context.trace_id:032x}",
        "spanId": f"{span.context.span_id:016x}",
        "name": span.name,
        "kind": int(span.kind.value) + 1,  # OTLP counts SPAN_KIND_INTERNAL as 1
        "startTimeUnixNano": str(span.start_time or 0),
        "endTimeUnixNano": str(span.end_time or 0),
        "attributes": _attributes(span.attributes),
    }
    if span.parent is not None:
        out["parentSpanId"] = f"{span.parent.span_id:016x}"
    if span.events:
        out["events"] = [
            {
                "timeUnixNano": str(event.timestamp),
                "name": event.name,
                "attributes": _attributes(event.attributes),
            }
            for event in span.events
        ]
    status = span.status
    if status is not None and status.status_code.value:
        out["status"] = {"code": int(status.status_code.value), "message": status.description or ""}
    return out


def otlp_json(spans: list[Any]) -> dict[str, Any]:
    """Spans as an OTLP JSON ``ExportTraceServiceRequest``, grouped by resource and scope."""
    groups: dict[tuple[int, str], tuple[Any, Any, list[dict[str, Any]]]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        scope = span.instrumentation_scope
        key = (id(span.resource), scope.name if scope else "")
        groups.setdefault(key, (span.resource, scope, []))[2].append(_span(span))
    resource_spans = []
    for resource, scope, items in groups.values():
        resource_spans.append(
            {
                "resource": {"attributes": _attributes(resource.attributes if resource else {})},
                "scopeSpans": [
                    {
                        "scope": {
                            "name": scope.name if scope else "",
                            "version": (scope.version if scope else None) or "",
                        },
                        "spans": items,
                    }
                ],
            }
        )
    return {"resourceSpans": resource_spans}
