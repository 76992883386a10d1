"""Trace files from public projects (../shared/corpus/traces): what each must yield, counted by
reading the file; and every container and dialect on fixtures written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS

from platform_eval import formats, traces

WILD = CORPUS / "traces"


def _events(conversation: traces.Conversation) -> list[tuple[str, str, Any]]:
    """(author, kind, what) for every part: kind is text, call or response."""
    out = []
    for turn in conversation.agent_data.turns or []:
        for event in turn.events or []:
            for part in (event.content.parts if event.content else None) or []:
                if part.function_call:
                    out.append(
                        (event.author, "call", (part.function_call.name, part.function_call.args))
                    )
                elif part.function_response:
                    out.append(
                        (
                            event.author,
                            "response",
                            (part.function_response.name, part.function_response.response),
                        )
                    )
                elif part.text and not part.thought:
                    out.append((event.author, "text", part.text))
    return out


def _only(path: Path) -> traces.Conversation:
    conversations = traces.load_conversations(path)
    assert len(conversations) == 1
    return conversations[0]


def _final(conversation: traces.Conversation) -> str:
    return [
        what for author, kind, what in _events(conversation) if kind == "text" and author != "user"
    ][-1]


@pytest.mark.corpus
def test_adk_live_spans_with_a_mock_signature() -> None:
    # ADK 2.5 spans whose parts carry thought_signature "MOCK_SIGNATURE" (not base64): the
    # signature is dropped, never the answer.
    conversation = _only(WILD / "strands-evals_adk_live_spans.json")
    assert conversation.first_user_message == "What is 15 multiplied by 37?"
    assert ("math_agent", "call", ("calculator", {"expression": "15 * 37"})) in _events(
        conversation
    )
    assert ("math_agent", "response", ("calculator", {"result": "555"})) in _events(conversation)
    assert _final(conversation) == "15 multiplied by 37 is 555."


@pytest.mark.corpus
def test_adk_debug_trace_two_traces_of_one_session() -> None:
    # VeADK's dump of ADK's /debug/trace: a flat list, integer ids, `agent_run [name]` spans.
    conversation = _only(WILD / "veadk_adk_debug_trace_spans.json")
    assert conversation.id == "veadk_example_session"
    users = [what for author, kind, what in _events(conversation) if author == "user"]
    assert users == ["How is the weather like in Xi'an?", "How is the weather like in BeiJing?"]
    calls = [what for _, kind, what in _events(conversation) if kind == "call"]
    assert calls == [
        ("get_city_weather", {"city": "Xi'an"}),
        ("get_city_weather", {"city": "Beijing"}),
    ]
    assert _final(conversation).startswith("The weather in Beijing is sunny")


@pytest.mark.corpus
def test_adk_api_server_run_events_say_the_user_message_is_missing() -> None:
    conversation = _only(WILD / "adk_api_server_run_response.json")
    assert ("weather_time_agent", "call", ("get_weather", {"city": "new york"})) in _events(
        conversation
    )
    assert _final(conversation).startswith("OK. The weather in New York is sunny")
    assert any("no user message" in note for note in conversation.notes)


@pytest.mark.corpus
def test_otel_genai_conventions_in_attributes_and_events() -> None:
    conversation = _only(WILD / "strands-evals_otel_genai_convention_spans.json")
    events = _events(conversation)
    assert conversation.first_user_message == "What's the weather in Paris and London?"
    assert [w for _, k, w in events if k == "call"] == [
        ("get_weather", {"location": "Paris"}),
        ("get_weather", {"location": "London"}),
    ]
    # The London call failed: its error is its response, not a silent gap.
    assert ("WeatherAssistant", "response", ("get_weather", {"error": "TimeoutError"})) in events
    assert _final(conversation).startswith("The weather in Paris is rainy at 57°F.")


@pytest.mark.corpus
def test_openai_agents_three_agents_keep_their_authors() -> None:
    conversation = _only(WILD / "strands-evals_openai_agents_genai_live_spans.json")
    assert set(conversation.agent_data.agents or {}) == {
        "coordinator",
        "research_specialist",
        "math_specialist",
    }
    by_tool = {w[0]: a for a, k, w in _events(conversation) if k == "call"}
    assert by_tool == {
        "ask_research_specialist": "coordinator",
        "lookup_stock_price": "research_specialist",
        "ask_math_specialist": "coordinator",
        "multiply_numbers": "math_specialist",
    }
    # Two calls of one tool with different arguments are both kept.
    multiplies = [
        w for _, k, w in _events(conversation) if k == "call" and w[0] == "multiply_numbers"
    ]
    assert multiplies == [
        ("multiply_numbers", {"a": 240, "b": 1000}),
        ("multiply_numbers", {"a": 0, "b": 1000}),
    ]
    assert _final(conversation).startswith("The current stock price of Amazon (AMZN) is $240.98.")


def _without_tool_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def is_tool(span: dict[str, Any]) -> bool:
        attributes = span.get("attributes") or {}
        return (
            attributes.get("openinference.span.kind") == "TOOL"
            or attributes.get("gen_ai.operation.name") == "execute_tool"
            or str(span.get("name", "")).endswith(".tool")
        )

    kept = [span for span in spans if not is_tool(span)]
    assert len(kept) < len(spans)
    return kept


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "calls"),
    [
        ("strands-evals_openinference_live_spans.json", ["get_weather", "finish"]),
        (
            "strands-evals_openai_agents_genai_live_spans.json",
            [
                "ask_research_specialist",
                "lookup_stock_price",
                "ask_math_specialist",
                "multiply_numbers",
                "multiply_numbers",
            ],
        ),
    ],
)
def test_tool_calls_only_in_the_models_output_are_kept(
    name: str, calls: list[str], tmp_path: Path
) -> None:
    """A trace exported without its tool spans (a LangChain agent, an OpenAI Agents SDK run):
    the tool calls the model's output messages hold are the candidate's tool calls."""
    bare = tmp_path / name
    bare.write_text(json.dumps(_without_tool_spans(json.loads((WILD / name).read_text()))))
    conversation = _only(bare)
    assert [what[0] for _, kind, what in _events(conversation) if kind == "call"] == calls


@pytest.mark.corpus
def test_pydantic_ai_spans() -> None:
    conversation = _only(WILD / "strands-evals_pydantic_ai_live_spans.json")
    assert conversation.first_user_message == "What's the weather like in Seattle right now?"
    assert conversation.tool_calls == ["get_weather"]
    assert _final(conversation).startswith("The current weather in Seattle is 62°F")


@pytest.mark.corpus
def test_openinference_langgraph_spans() -> None:
    conversation = _only(WILD / "strands-evals_openinference_live_spans.json")
    assert (
        conversation.first_user_message
        == "What is the weather difference between Taipei and Seattle?"
    )
    calls = [w for _, k, w in _events(conversation) if k == "call"]
    assert calls == [
        ("get_weather", {"city": "Taipei"}),
        ("finish", {"answer": "Taipei is warmer"}),
    ]


@pytest.mark.corpus
def test_openinference_claude_agent_sdk_with_sub_agents() -> None:
    conversation = _only(WILD / "strands-evals_claude_live_spans.json")
    events = _events(conversation)
    assert conversation.first_user_message.startswith("Look up the weather in New York and Seattle")
    # The sub-agents' Bash calls are theirs, not the query's.
    assert {a for a, k, w in events if k == "call" and w[0] == "Bash"} == {"Agent"}
    assert [w[0] for _, k, w in events if k == "call"].count("Agent") == 3
    assert _final(conversation).startswith("New York is 89°F and Seattle is 72°F.")
    # The query span's six output messages are the turn, in order, its texts between the
    # calls kept; each sub-agent's work sits between its call and its response.
    shape = [(a, k, w if k == "text" else w[0]) for a, k, w in events]
    query, sub = "ClaudeAgentSDK.query", "Agent"
    assert [(a, k, w[:20] if k == "text" else w) for a, k, w in shape] == [
        ("user", "text", "Look up the weather "),
        (query, "text", "I'll look up the wea"),
        (query, "call", "Agent"),
        (sub, "call", "Bash"),
        (sub, "response", "Bash"),
        (query, "response", "Agent"),
        (query, "call", "Agent"),
        (sub, "call", "Bash"),
        (sub, "response", "Bash"),
        (query, "response", "Agent"),
        (query, "text", "Got both temperature"),
        (query, "call", "Agent"),
        (sub, "call", "Bash"),
        (sub, "response", "Bash"),
        (query, "response", "Agent"),
        (query, "text", "New York is 89°F and"),
    ]
    bash = [w for a, k, w in events if k == "call" and w[0] == "Bash"]
    assert "New York" in bash[0][1]["command"] and "Seattle" in bash[1][1]["command"]


@pytest.mark.corpus
def test_console_exporter_without_content_is_refused_saying_why() -> None:
    # Microsoft Agent Framework, console exporter: every span printed twice, no message content.
    spans = traces.spans_from_data(formats.read_data(WILD / "maf_console_exporter_traces.jsonl"))
    assert len(spans) == 199  # 387 printed, each span once
    with pytest.raises(formats.FormatError, match="no message content was recorded"):
        traces.load_conversations(WILD / "maf_console_exporter_traces.jsonl")


@pytest.mark.corpus
def test_every_wild_trace_file_is_read_or_refused_with_a_reason() -> None:
    for path in sorted(WILD.glob("*.json*")):
        try:
            conversations = traces.load_conversations(path)
        except formats.FormatError as error:
            assert "no message content" in str(error), path
            continue
        assert conversations and all(c.agent_data.turns for c in conversations), path


# -- fixtures written here: every container and dialect ------------------------------------------


def _semconv_spans() -> list[dict[str, Any]]:
    """One turn in the GenAI conventions as flat spans: an agent, an LLM call, a tool."""
    return [
        {
            "name": "invoke_agent helper",
            "context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "01" * 8},
            "parent_id": None,
            "start_time": "2026-01-01T00:00:00Z",
            "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
        },
        {
            "name": "chat m",
            "context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "02" * 8},
            "parent_id": "0x" + "01" * 8,
            "start_time": "2026-01-01T00:00:01Z",
            "attributes": {"gen_ai.operation.name": "chat"},
            "events": [
                {"name": "gen_ai.user.message", "attributes": {"content": "Add 2 and 3"}},
                {
                    "name": "gen_ai.choice",
                    "attributes": {
                        "message": json.dumps(
                            {
                                "role": "assistant",
                                "tool_calls": [
                                    {
                                        "id": "c1",
                                        "function": {
                                            "name": "add",
                                            "arguments": '{"a": 2, "b": 3}',
                                        },
                                    }
                                ],
                            }
                        )
                    },
                },
            ],
        },
        {
            "name": "execute_tool add",
            "context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "03" * 8},
            "parent_id": "0x" + "01" * 8,
            "start_time": "2026-01-01T00:00:02Z",
            "attributes": {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "add",
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.result": "5",
            },
        },
        {
            "name": "chat m",
            "context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "04" * 8},
            "parent_id": "0x" + "01" * 8,
            "start_time": "2026-01-01T00:00:03Z",
            "attributes": {
                "gen_ai.operation.name": "chat",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": "2 + 3 = 5",
            },
        },
    ]


def _check_semconv_turn(conversation: traces.Conversation) -> None:
    assert conversation.first_user_message == "Add 2 and 3"
    assert _events(conversation)[1:] == [
        ("helper", "call", ("add", {"a": 2, "b": 3})),
        ("helper", "response", ("add", {"result": 5})),
        ("helper", "text", "2 + 3 = 5"),
    ]


def test_console_exporter_objects_one_after_another(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    spans = _semconv_spans()
    # Pretty-printed, every span twice, as the console exporter writes them.
    path.write_text("\n".join(json.dumps(s, indent=4) for s in spans + spans) + "\n")
    _check_semconv_turn(_only(path))


def test_adot_and_tempo_trace_wrappers(tmp_path: Path) -> None:
    adot = tmp_path / "adot.json"
    adot.write_text(json.dumps({"session_id": "s1", "spans": _semconv_spans()}))
    _check_semconv_turn(_only(adot))


def _otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    def value(v: Any) -> dict[str, Any]:
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": str(v)}

    def attributes(attrs: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"key": k, "value": value(v)} for k, v in attrs.items()]

    return {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": s["context"]["trace_id"][2:],
                                "spanId": s["context"]["span_id"][2:],
                                "parentSpanId": (s["parent_id"] or "0x")[2:],
                                "name": s["name"],
                                "startTimeUnixNano": str(1767225600_000_000_000 + i),
                                "attributes": attributes(s["attributes"]),
                                "events": [
                                    {"name": e["name"], "attributes": attributes(e["attributes"])}
                                    for e in s.get("events", [])
                                ],
                            }
                            for i, s in enumerate(spans)
                        ]
                    }
                ]
            }
        ]
    }


def test_tempo_trace_answer(tmp_path: Path) -> None:
    path = tmp_path / "tempo.json"
    path.write_text(json.dumps({"trace": _otlp(_semconv_spans())}))
    _check_semconv_turn(_only(path))


def test_otlp_protobuf(tmp_path: Path) -> None:
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    data = _otlp(_semconv_spans())
    for resource in data["resourceSpans"]:
        for span in resource["scopeSpans"][0]["spans"]:
            # proto3 JSON writes bytes as base64; the ids above are hex.
            for key in ("traceId", "spanId", "parentSpanId"):
                if span[key]:
                    import base64

                    span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    request = ParseDict(data, ExportTraceServiceRequest())
    path = tmp_path / "traces.binpb"
    path.write_bytes(request.SerializeToString())
    _check_semconv_turn(_only(path))
    (tmp_path / "junk.pb").write_bytes(b"\xff\xfe not protobuf")
    with pytest.raises(formats.FormatError, match="not OTLP protobuf"):
        traces.load_conversations(tmp_path / "junk.pb")


def test_openinference_attributes(tmp_path: Path) -> None:
    spans = [
        {
            "name": "agent",
            "span_id": "root",
            "trace_id": "t",
            "parent_span_id": None,
            "start_time": 1,
            "attributes": {
                "openinference.span.kind": "CHAIN",
                "input.value": json.dumps({"messages": [{"type": "human", "content": "Hi"}]}),
                "output.value": "Hello there",
            },
        },
        {
            "name": "lookup",
            "span_id": "tool",
            "trace_id": "t",
            "parent_span_id": "root",
            "start_time": 2,
            "attributes": {
                "openinference.span.kind": "TOOL",
                "tool.name": "lookup",
                "input.value": '{"q": "x"}',
                "output.value": '{"found": true}',
            },
        },
    ]
    path = tmp_path / "oi.json"
    path.write_text(json.dumps(spans))
    conversation = _only(path)
    assert _events(conversation) == [
        ("user", "text", "Hi"),
        ("agent", "call", ("lookup", {"q": "x"})),
        ("agent", "response", ("lookup", {"found": True})),
        ("agent", "text", "Hello there"),
    ]


def test_spans_with_no_agent_or_llm_span_say_what_they_saw(tmp_path: Path) -> None:
    path = tmp_path / "http.json"
    path.write_text(
        json.dumps(
            [
                {"name": "GET /health", "span_id": "a", "trace_id": "t", "attributes": {}},
                {"name": "SELECT users", "span_id": "b", "trace_id": "t", "attributes": {}},
            ]
        )
    )
    with pytest.raises(formats.FormatError, match=r"2 spans, none of them .*GET /health"):
        traces.load_conversations(path)


def test_a_bare_llm_call_is_a_turn(tmp_path: Path) -> None:
    path = tmp_path / "llm.json"
    messages = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Ping?"}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "Pong."}]}]
        ),
    }
    path.write_text(
        json.dumps([{"name": "chat m", "span_id": "a", "trace_id": "t", "attributes": messages}])
    )
    assert _events(_only(path)) == [("user", "text", "Ping?"), ("agent", "text", "Pong.")]


def test_upload_reports_what_a_trace_reader_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, sync_client: Any
) -> None:
    from platform_eval import jobs

    spans = _semconv_spans()
    # The last answer's part is not a part at all: dropped, and said so.
    spans[3]["attributes"] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": ["not a part", {"type": "text", "content": "5"}]}]
        ),
    }
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(spans))
    evalset = tmp_path / "add.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "add",
                "eval_cases": [
                    {
                        "eval_id": "add",
                        "conversation": [
                            {
                                "invocation_id": "i",
                                "user_content": {
                                    "role": "user",
                                    "parts": [{"text": "Add 2 and 3"}],
                                },
                                "final_response": {"role": "model", "parts": [{"text": "5"}]},
                            }
                        ],
                    }
                ],
            }
        )
    )
    with caplog.at_level("WARNING", logger="platform_eval"):
        jobs.upload_traces(sync_client, evalset, [trace], manifest=tmp_path / "m.jsonl")
    assert any("a part that is not an object was dropped" in r.getMessage() for r in caplog.records)


def test_calls_of_one_tool_without_ids_are_kept_apart(tmp_path: Path) -> None:
    """Two calls of the same tool, no ids anywhere: both kept, each with its own result, in
    the order made; never merged by name."""
    trace = "0x" + "cd" * 16

    def span(n: int, name: str, parent: int | None, **attributes: Any) -> dict[str, Any]:
        return {
            "name": name,
            "context": {"trace_id": trace, "span_id": f"0x{n:016x}"},
            "parent_id": f"0x{parent:016x}" if parent else None,
            "start_time": f"2026-01-01T00:00:0{n}Z",
            "attributes": attributes,
        }

    calls = [
        {"type": "tool_call", "name": "get_weather", "arguments": {"city": city}}
        for city in ("Paris", "Oslo")
    ]
    spans = [
        span(1, "invoke_agent helper", None, **{"gen_ai.operation.name": "invoke_agent"}),
        span(
            2,
            "chat m",
            1,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "Paris and Oslo?"}]}]
                ),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": calls}]),
            },
        ),
        span(
            3,
            "execute_tool get_weather",
            1,
            **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": '"sun"'},
        ),
        span(
            4,
            "execute_tool get_weather",
            1,
            **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": '"rain"'},
        ),
    ]
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(spans))
    (conversation,) = traces.load_conversations(path)
    assert _events(conversation)[1:] == [
        ("helper", "call", ("get_weather", {"city": "Paris"})),
        ("helper", "call", ("get_weather", {"city": "Oslo"})),
        ("helper", "response", ("get_weather", {"result": "sun"})),
        ("helper", "response", ("get_weather", {"result": "rain"})),
    ]
