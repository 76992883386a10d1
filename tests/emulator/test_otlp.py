"""Content in OTLP log records, and traces exported straight into the emulator over OTLP/HTTP.

google-adk 2.x records message content in log records (the
``gen_ai.client.inference.operation.details`` event) unless told to put it on spans. These tests
record real ADK runs in that mode and read them back from files (spans and logs apart, or
together) and from the emulator's OTLP receiver, fed by OpenTelemetry's own OTLP/HTTP exporters.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from adk_runs import ANSWERS, EXPECTED, QUESTIONS, Recording, record, turns_of
from google.auth.credentials import AnonymousCredentials
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from platform_eval import Client
from platform_eval.cli import main
from platform_eval.cli._common import UsageError
from platform_eval.cli._traces import trace_sources
from platform_eval.emulator import Emulator
from platform_eval.errors import ConfigurationError
from platform_eval.formats import FormatError
from platform_eval.formats.load import Kind
from platform_eval.traces import (
    Conversation,
    conversations_from,
    load_conversations,
    load_traces,
    session_to_conversation,
)


def _tool_results(conversation: Conversation) -> list[tuple[str, dict[str, Any]]]:
    return [
        (part.function_response.name or "", dict(part.function_response.response or {}))
        for turn in conversation.agent_data.turns or []
        for event in turn.events or []
        for part in (event.content.parts if event.content else None) or []
        if part.function_response and part.function_response.name != "transfer_to_agent"
    ]


RESULTS = [
    ("get_weather", {"city": "Paris", "forecast": "sunny"}),
    ("get_weather", {"city": "Oslo", "forecast": "rain"}),
]


@pytest.fixture(scope="module")
def event_only() -> Recording:
    """ADK 2.x with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY (what
    ``true`` means): no content on any span, all of it in log records."""
    return record(schema=2, content="EVENT_ONLY")


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_content_in_log_records_beside_the_spans(event_only: Recording, tmp_path: Path) -> None:
    spans = _write(tmp_path / "spans.json", event_only.otlp_json())
    logs = _write(tmp_path / "logs.json", event_only.otlp_logs_json())
    (conversation,) = load_traces([spans, logs])
    assert turns_of(conversation) == EXPECTED
    # The tool results too: no tool span holds them, the next LLM request does.
    assert _tool_results(conversation) == RESULTS
    assert _tool_results(session_to_conversation(event_only.session)) == RESULTS
    assert conversation.notes == []
    # A folder of both reads the same.
    assert turns_of(load_traces([tmp_path])[0]) == EXPECTED


@pytest.mark.parametrize("layout", ["list", "jsonl", "one-object"])
def test_spans_and_logs_in_one_file(event_only: Recording, tmp_path: Path, layout: str) -> None:
    spans, logs = event_only.otlp_json(), event_only.otlp_logs_json()
    if layout == "jsonl":
        path = tmp_path / "telemetry.jsonl"
        path.write_text(json.dumps(spans) + "\n" + json.dumps(logs) + "\n")
    elif layout == "list":
        path = _write(tmp_path / "telemetry.json", [spans, logs])
    else:
        path = _write(tmp_path / "telemetry.json", {**spans, **logs})
    (conversation,) = load_conversations(path)
    assert turns_of(conversation) == EXPECTED
    assert _tool_results(conversation) == RESULTS


def test_spans_without_their_logs_say_where_the_content_went(
    event_only: Recording, tmp_path: Path
) -> None:
    spans = _write(tmp_path / "spans.json", event_only.otlp_json())
    with pytest.raises(FormatError, match="log records, not spans"):
        load_conversations(spans)


def test_logs_without_their_spans_are_an_error(event_only: Recording, tmp_path: Path) -> None:
    logs = _write(tmp_path / "logs.json", event_only.otlp_logs_json())
    with pytest.raises(FormatError, match=r"\d+ log records and no spans.*pass the file"):
        load_conversations(logs)


def test_log_records_of_spans_not_read_are_reported(event_only: Recording, tmp_path: Path) -> None:
    spans = _write(tmp_path / "spans.json", event_only.otlp_json())
    logs = event_only.otlp_logs_json()
    stray = json.loads(json.dumps(logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]))
    stray["spanId"] = "00000000000000aa"
    logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"].append(stray)
    (conversation,) = load_traces([spans, _write(tmp_path / "logs.json", logs)])
    assert turns_of(conversation) == EXPECTED
    assert any(
        "1 log records were emitted in spans that are in none" in n for n in conversation.notes
    )


def test_a_malformed_log_record_names_its_path(tmp_path: Path) -> None:
    bad = {"resourceLogs": [{"scopeLogs": [{"logRecords": ["not a record"]}]}]}
    with pytest.raises(FormatError, match=r"resourceLogs\[0\]\.scopeLogs\[0\]\.logRecords\[0\]"):
        load_conversations(_write(tmp_path / "logs.json", bad))


# -- the emulator's OTLP receiver ----------------------------------------------------------------


@pytest.fixture
def receiver() -> Iterator[Emulator]:
    # Its own emulator: recorded telemetry is the emulator's, not a project's.
    with Emulator() as emulator:
        yield emulator


def _exported(
    emulator: Emulator, compression: Compression = Compression.NoCompression
) -> Recording:
    spans = OTLPSpanExporter(endpoint=f"{emulator.url}/v1/traces", compression=compression)
    logs = OTLPLogExporter(endpoint=f"{emulator.url}/v1/logs", compression=compression)
    return record(
        schema=2,
        content="EVENT_ONLY",
        span_processors=[SimpleSpanProcessor(spans)],
        log_processors=[SimpleLogRecordProcessor(logs)],
    )


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_opentelemetry_exporters_send_into_the_emulator(
    receiver: Emulator, compression: Compression
) -> None:
    recording = _exported(receiver, compression)
    with receiver.client() as client:
        exports = client.recorded_telemetry()
    signals = {next(iter(e)) for e in exports}
    assert signals == {"resourceSpans", "resourceLogs"}
    # One export per span and per log record (simple processors), nothing lost.
    assert sum("resourceSpans" in e for e in exports) == len(recording.spans)
    assert sum("resourceLogs" in e for e in exports) == len(recording.logs)
    (conversation,) = conversations_from(exports, Kind.OTLP_TRACES, "emulator")
    assert turns_of(conversation) == EXPECTED
    assert _tool_results(conversation) == RESULTS
    assert httpx.delete(f"{receiver.url}/_emulator/otlp").status_code == 200
    assert httpx.get(f"{receiver.url}/_emulator/otlp").json() == []


def test_otlp_json_is_received_too(receiver: Emulator) -> None:
    recording = record(schema=2, content=True, turns=1)
    answer = httpx.post(f"{receiver.url}/v1/traces", json=recording.otlp_json())
    assert answer.status_code == 200 and answer.json() == {}
    (conversation,) = conversations_from(
        receiver.client().recorded_telemetry(), Kind.OTLP_TRACES, "emulator"
    )
    assert turns_of(conversation) == EXPECTED[:1]


@pytest.mark.parametrize(
    ("path", "headers", "body", "message"),
    [
        ("/v1/traces", {"content-type": "application/x-protobuf"}, b"\xff\xff", "not OTLP"),
        ("/v1/traces", {"content-type": "text/plain"}, b"{}", "OTLP/HTTP sends"),
        ("/v1/traces", {"content-type": "application/json"}, b"[1]", "JSON object"),
        (
            "/v1/traces",
            {"content-type": "application/json"},
            json.dumps({"resourceLogs": []}).encode(),
            "resourceLogs belong in another endpoint",
        ),
        (
            "/v1/logs",
            {"content-type": "application/json"},
            json.dumps({"resourceLogs": [{"scopeLogs": 3}]}).encode(),
            r"resourceLogs\[0\]\.scopeLogs",
        ),
        (
            "/v1/traces",
            {"content-type": "application/json", "content-encoding": "gzip"},
            b"not gzip",
            "gzip body is corrupt",
        ),
        (
            "/v1/traces",
            {"content-type": "application/json", "content-encoding": "br"},
            b"{}",
            "not supported",
        ),
    ],
    ids=["bad-protobuf", "bad-type", "not-object", "wrong-signal", "bad-shape", "bad-gzip", "br"],
)
def test_the_receiver_refuses_what_it_cannot_read(
    receiver: Emulator, path: str, headers: dict[str, str], body: bytes, message: str
) -> None:
    answer = httpx.post(f"{receiver.url}{path}", headers=headers, content=body)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert re.search(message, error["message"]), error["message"]
    assert httpx.get(f"{receiver.url}/_emulator/otlp").json() == []


def test_a_gzip_bomb_is_refused_at_the_size_limit() -> None:
    with Emulator(max_body_bytes=1024) as small:
        bomb = gzip.compress(b'{"resourceSpans": [' + b" " * 100_000 + b"]}")
        assert len(bomb) < 1024
        answer = httpx.post(
            f"{small.url}/v1/traces",
            headers={"content-type": "application/json", "content-encoding": "gzip"},
            content=bomb,
        )
        assert answer.status_code == 400
        assert "decompressed body is larger" in answer.json()["error"]["message"]
        deflated = zlib.compress(b'{"resourceSpans": []}')
        answer = httpx.post(
            f"{small.url}/v1/traces",
            headers={"content-type": "application/json", "content-encoding": "deflate"},
            content=deflated,
        )
        assert answer.status_code == 200


def test_recorded_telemetry_needs_an_emulator() -> None:
    service = Client(
        "p", api_endpoint="https://aiplatform.example.com", credentials=AnonymousCredentials()
    )
    with service, pytest.raises(ConfigurationError, match="not at an emulator"):
        service.recorded_telemetry()


# -- the command line ----------------------------------------------------------------------------


def _eval_set() -> dict[str, Any]:
    def content(text: str, role: str) -> dict[str, Any]:
        return {"role": role, "parts": [{"text": text}]}

    calls = [[{"name": "get_weather", "args": {"city": "Paris"}}]]
    calls += [[{"name": "get_weather", "args": {"city": "Oslo"}}], []]
    return {
        "eval_set_id": "weather_turns",
        "eval_cases": [
            {
                "eval_id": "three_turns",
                "conversation": [
                    {
                        "invocation_id": f"turn-{i}",
                        "user_content": content(question, "user"),
                        "final_response": content(answer, "model"),
                        "intermediate_data": {"tool_uses": uses},
                    }
                    for i, (question, answer, uses) in enumerate(
                        zip(QUESTIONS, ANSWERS, calls, strict=True)
                    )
                ],
            }
        ],
    }


def test_run_traces_emulator_evaluates_what_was_exported(
    receiver: Emulator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evalset = _write(tmp_path / "weather_turns.evalset.json", _eval_set())
    endpoint = ["--endpoint", receiver.host_port]
    metrics = ["--metrics", "tool_trajectory_avg_score,response_match_score"]
    run = ["run", str(evalset), "--traces", "emulator:", *metrics, "--format", "json"]
    assert main(["-q", *endpoint, *run]) == 2
    assert "has received no traces" in capsys.readouterr().err
    _exported(receiver)
    assert main(["-q", *endpoint, *run, "--threshold", "tool_trajectory_avg_score=1"]) == 0
    report = json.loads(capsys.readouterr().out)
    scores = {row["metric"]: row["score"] for row in report["rows"]}
    assert scores == {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0}
    assert main(["-q", *endpoint, "convert-traces", "emulator:"]) == 0
    (converted,) = json.loads(capsys.readouterr().out)
    assert len(converted["agentData"]["turns"]) == 3
    # The eval case with its last two turns swapped: the session's turn 2 answers another
    # question than the case's turn 2, and the result says so instead of scoring it.
    swapped = _eval_set()
    turns = swapped["eval_cases"][0]["conversation"]
    turns[1], turns[2] = turns[2], turns[1]
    evalset.write_text(json.dumps(swapped))
    assert main(["-q", *endpoint, *run, "--threshold", "tool_trajectory_avg_score=1"]) == 1
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {row["status"] for row in rows} == {"NOT_EVALUATED"}
    assert all(
        "turn 2 does not line up: the candidate's user message is 'And in Oslo?'"
        in row["explanation"]
        for row in rows
    )


def test_traces_emulator_needs_an_emulator_target() -> None:
    with pytest.raises(UsageError, match="pass --endpoint"):
        trace_sources(["emulator:"], None)


def test_per_message_log_events_of_the_older_conventions(tmp_path: Path) -> None:
    """opentelemetry-instrumentation-openai-v2 and others emit one log record per message
    (``gen_ai.user.message``, ``gen_ai.choice``) with the message in its body."""
    trace_id, agent_id, chat_id = "0a" * 16, "0b" * 8, "0c" * 8

    def kv(**values: Any) -> dict[str, Any]:
        out = []
        for key, value in values.items():
            wrapped = kv(**value) if isinstance(value, dict) else {"stringValue": value}
            out.append({"key": key, "value": wrapped})
        return {"kvlistValue": {"values": out}}

    spans = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": trace_id,
                                "spanId": agent_id,
                                "name": "invoke_agent helper",
                                "startTimeUnixNano": "1",
                                "attributes": [
                                    {
                                        "key": "gen_ai.operation.name",
                                        "value": {"stringValue": "invoke_agent"},
                                    }
                                ],
                            },
                            {
                                "traceId": trace_id,
                                "spanId": chat_id,
                                "parentSpanId": agent_id,
                                "name": "chat gpt-4o",
                                "startTimeUnixNano": "2",
                                "attributes": [
                                    {
                                        "key": "gen_ai.operation.name",
                                        "value": {"stringValue": "chat"},
                                    }
                                ],
                            },
                        ]
                    }
                ]
            }
        ]
    }
    logs = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "traceId": trace_id,
                                "spanId": chat_id,
                                "eventName": "gen_ai.user.message",
                                "body": kv(content="What is 2+2?"),
                            },
                            {
                                "traceId": trace_id,
                                "spanId": chat_id,
                                # Older SDKs name the event in an attribute.
                                "attributes": [
                                    {"key": "event.name", "value": {"stringValue": "gen_ai.choice"}}
                                ],
                                "body": kv(
                                    index="0",
                                    finish_reason="stop",
                                    message={"role": "assistant", "content": "4."},
                                ),
                            },
                        ]
                    }
                ]
            }
        ]
    }
    (conversation,) = load_traces(
        [_write(tmp_path / "s.json", spans), _write(tmp_path / "l.json", logs)]
    )
    assert conversation.first_user_message == "What is 2+2?"
    (turn,) = conversation.agent_data.turns or []
    texts = [(e.author, p.text) for e in turn.events or [] for p in e.content.parts or []]
    assert texts == [("user", "What is 2+2?"), ("helper", "4.")]


def test_kept_exports_are_capped_until_read_and_cleared() -> None:
    """Exports pile up until someone reads them: past the cap the next is refused (429,
    saying how to make room), and the answer that reads them stays bounded."""
    recording = record(schema=2, content=True, turns=1).otlp_json()
    size = len(json.dumps(recording, separators=(",", ":")))
    with Emulator(max_telemetry_bytes=size * 3) as emulator:
        for _ in range(3):
            assert httpx.post(f"{emulator.url}/v1/traces", json=recording).status_code == 200
        refused = httpx.post(f"{emulator.url}/v1/traces", json=recording)
        assert refused.status_code == 429, refused.text
        assert "DELETE /_emulator/otlp" in refused.json()["error"]["message"]
        kept = httpx.get(f"{emulator.url}/_emulator/otlp")
        assert len(kept.json()) == 3 and len(kept.content) <= size * 3 + 10
        assert httpx.delete(f"{emulator.url}/_emulator/otlp").status_code == 200
        assert httpx.post(f"{emulator.url}/v1/traces", json=recording).status_code == 200
