"""Real google-adk runs, recorded: a Runner, a scripted model (no network), in-memory spans.

``record(...)`` runs a small agent for a few user messages under a chosen telemetry schema and
content setting, and returns what ADK wrote: its spans as OTLP JSON (the shape an OTLP JSON
exporter or collector writes) and the session as ADK exports it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from opentelemetry import _logs, trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from platform_eval.traces import Conversation

try:
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter
except ImportError:  # the SDK of older google-adk versions (tools/record_adk.py runs on them)
    from opentelemetry.sdk._logs.export import (  # type: ignore[attr-defined,no-redef]
        InMemoryLogExporter as InMemoryLogRecordExporter,
    )

if TYPE_CHECKING:
    from opentelemetry.sdk._logs import ReadableLogRecord

_EXPORTER = InMemorySpanExporter()
_LOG_EXPORTER = InMemoryLogRecordExporter()
_installed = False
#: Processors tests add for one run (an OTLP exporter to the emulator), removed after it.
_extra_span_processors: list[Any] = []
_extra_log_processors: list[Any] = []


class _Fanout:
    """A processor that forwards to whatever the current run added (providers are global)."""

    def __init__(self, targets: list[Any]) -> None:
        self.targets = targets

    def __getattr__(self, name: str) -> Any:
        def forward(*args: Any, **kwargs: Any) -> Any:
            for target in self.targets:
                getattr(target, name)(*args, **kwargs)
            return True

        return forward


def _install() -> None:
    # The global tracer and logger providers can be set once per process; ADK follows them.
    global _installed
    if not _installed:
        # An SDK provider set earlier in this process (run --agent --save-traces sets one)
        # is joined, not replaced: a second set_tracer_provider would be ignored.
        current = trace.get_tracer_provider()
        provider = current if isinstance(current, TracerProvider) else TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        provider.add_span_processor(_Fanout(_extra_span_processors))  # type: ignore[arg-type]
        if provider is not current:
            trace.set_tracer_provider(provider)
        logs = LoggerProvider()
        logs.add_log_record_processor(SimpleLogRecordProcessor(_LOG_EXPORTER))
        logs.add_log_record_processor(_Fanout(_extra_log_processors))  # type: ignore[arg-type]
        _logs.set_logger_provider(logs)
        _installed = True


class ScriptedModel(BaseLlm):
    """Answers each LLM call with the next scripted content."""

    model: str = "scripted-model"
    script: list[types.Content] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(content=self.script.pop(0))


def get_weather(city: str) -> dict[str, str]:
    """The weather forecast of a city."""
    return {"city": city, "forecast": "sunny" if city == "Paris" else "rain"}


def call(name: str, **args: Any) -> types.Content:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return types.Content(role="model", parts=[part])


def say(text: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=text)])


QUESTIONS = ["What's the weather in Paris?", "And in Oslo?", "Thanks!"]
ANSWERS = ["It is sunny in Paris.", "It rains in Oslo.", "You're welcome!"]


def _weather_script() -> list[types.Content]:
    """What the weather agent's model answers, one LLM call after another, for QUESTIONS."""
    return [
        call("get_weather", city="Paris"),
        say(ANSWERS[0]),
        call("get_weather", city="Oslo"),
        say(ANSWERS[1]),
        say(ANSWERS[2]),
    ]


def _agents(sub_agent: bool) -> LlmAgent:
    if not sub_agent:
        return LlmAgent(
            name="weather_agent",
            model=ScriptedModel(script=_weather_script()),
            instruction="Answer questions about the weather.",
            tools=[get_weather],
        )
    # The root hands the conversation to its sub-agent, which then answers every turn.
    weather = LlmAgent(
        name="weather_agent",
        description="Knows the weather.",
        model=ScriptedModel(script=_weather_script()),
        instruction="Answer questions about the weather.",
        tools=[get_weather],
    )
    return LlmAgent(
        name="concierge",
        model=ScriptedModel(script=[call("transfer_to_agent", agent_name="weather_agent")]),
        instruction="Send weather questions to weather_agent.",
        sub_agents=[weather],
    )


@contextmanager
def _env(values: dict[str, str | None]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclass
class Recording:
    spans: list[ReadableSpan]
    session: dict[str, Any]
    logs: list[ReadableLogRecord]

    def otlp_json(self) -> dict[str, Any]:
        return to_otlp_json(self.spans)

    def otlp_logs_json(self) -> dict[str, Any]:
        return to_otlp_logs_json(self.logs)


def record(
    *,
    schema: int,
    content: bool | str,
    sub_agent: bool = False,
    turns: int = 3,
    span_processors: list[Any] | None = None,
    log_processors: list[Any] | None = None,
) -> Recording:
    """Runs the agent for ``turns`` user messages and returns its spans, logs and session.

    ``content``: for schema 2, True is ``SPAN_ONLY``, or a capture mode by name (``EVENT_ONLY``,
    the mode ``true`` means, writes content to log records only). ``span_processors`` and
    ``log_processors`` also receive this run's telemetry (an OTLP exporter, say).
    """
    _install()
    if schema == 2:
        mode = content if isinstance(content, str) else "SPAN_ONLY" if content else None
        env = {
            "ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": None,
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": mode,
        }
    else:
        env = {
            "ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1",
            "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "true" if content else "false",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": None,
        }
    _EXPORTER.clear()
    _LOG_EXPORTER.clear()
    _extra_span_processors[:] = span_processors or []
    _extra_log_processors[:] = log_processors or []
    try:
        with _env(env):
            session = asyncio.run(run_agent(_agents(sub_agent), QUESTIONS[:turns]))
    finally:
        _extra_span_processors.clear()
        _extra_log_processors.clear()
    return Recording(
        list(_EXPORTER.get_finished_spans()), session, list(_LOG_EXPORTER.get_finished_logs())
    )


async def run_agent(agent: LlmAgent, questions: list[str]) -> dict[str, Any]:
    """Runs the agent (google-adk's InMemoryRunner) for the questions; the session's JSON."""
    runner = InMemoryRunner(agent=agent, app_name="weather_app")
    session = await runner.session_service.create_session(app_name="weather_app", user_id="u1")
    for question in questions:
        message = types.Content(role="user", parts=[types.Part(text=question)])
        async for _ in runner.run_async(user_id="u1", session_id=session.id, new_message=message):
            pass
    done = await runner.session_service.get_session(
        app_name="weather_app", user_id="u1", session_id=session.id
    )
    assert done is not None
    return done.model_dump(mode="json", exclude_none=True)


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {"kvlistValue": {"values": _attributes(value)}}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attributes(attributes: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v)} for k, v in (attributes or {}).items()]


def to_otlp_json(spans: list[ReadableSpan]) -> dict[str, Any]:
    """Spans in the OTLP JSON encoding (hex ids, as the OpenTelemetry collector writes them)."""
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        context = span.get_span_context()
        assert context is not None
        raw: dict[str, Any] = {
            "traceId": format(context.trace_id, "032x"),
            "spanId": format(context.span_id, "016x"),
            "name": span.name,
            "kind": 1,
            "startTimeUnixNano": str(span.start_time),
            "endTimeUnixNano": str(span.end_time),
            "attributes": _attributes(span.attributes),
            "events": [
                {
                    "timeUnixNano": str(e.timestamp),
                    "name": e.name,
                    "attributes": _attributes(e.attributes),
                }
                for e in span.events
            ],
        }
        if span.parent is not None:
            raw["parentSpanId"] = format(span.parent.span_id, "016x")
        scope = span.instrumentation_scope.name if span.instrumentation_scope else ""
        by_scope.setdefault(scope, []).append(raw)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes({"service.name": "weather_app"})},
                "scopeSpans": [
                    {"scope": {"name": name}, "spans": raw_spans}
                    for name, raw_spans in by_scope.items()
                ],
            }
        ]
    }


def to_otlp_logs_json(logs: list[ReadableLogRecord]) -> dict[str, Any]:
    """Log records in the OTLP JSON encoding, as the collector's file exporter writes them."""
    records = []
    for log in logs:
        record = log.log_record
        raw: dict[str, Any] = {
            "timeUnixNano": str(record.timestamp or record.observed_timestamp or 0),
            "attributes": _attributes(record.attributes),
            "traceId": format(record.trace_id or 0, "032x"),
            "spanId": format(record.span_id or 0, "016x"),
        }
        if record.event_name:
            raw["eventName"] = record.event_name
        if record.body is not None:
            raw["body"] = _any_value(record.body)
        records.append(raw)
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": _attributes({"service.name": "weather_app"})},
                "scopeLogs": [{"scope": {"name": "google.adk"}, "logRecords": records}],
            }
        ]
    }


#: A turn as (user message, [(tool, arguments)], final answer).
Turn = tuple[str, list[tuple[str, dict[str, Any]]], str]


def turns_of(conversation: Conversation) -> list[Turn]:
    """Each turn as (the user's message, the tool calls with their arguments, the final
    answer): what ADK's own conversion of the same run must agree with."""
    out = []
    for turn in conversation.agent_data.turns or []:
        user, calls, final = "", [], ""
        for event in turn.events or []:
            for part in (event.content.parts if event.content else None) or []:
                if event.author == "user" and part.text:
                    user = part.text
                elif part.function_call and part.function_call.name != "transfer_to_agent":
                    calls.append((part.function_call.name, dict(part.function_call.args or {})))
                elif part.text and event.author != "user" and not part.thought:
                    final = part.text
        out.append((user, calls, final))
    return out


#: The turns every recording of the weather agent holds.
EXPECTED: list[Turn] = [
    (QUESTIONS[0], [("get_weather", {"city": "Paris"})], ANSWERS[0]),
    (QUESTIONS[1], [("get_weather", {"city": "Oslo"})], ANSWERS[1]),
    (QUESTIONS[2], [], ANSWERS[2]),
]
