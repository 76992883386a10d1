"""Traces of several agents: handoffs, agents used as tools, A2A peers, each event with its author
and in the order it happened.

The fixtures in ``data/traces`` are written here, in the shapes of the instrumentations that
record them (Traceloop's and OpenInference's OpenAI Agents SDK instrumentations, OpenInference's
LangChain instrumentation with a remote ADK agent reached over A2A; OpenLLMetry's LangChain
instrumentation under agntcy's ioa_observe, as rows of the collector's ClickHouse table): a
handoff that is only a call in the model's output, a handoff that is also a span, and a tool call
carried out by another agent with no tool span of its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from paths import TEST_DATA
from test_traces_wild import _events, _only

from platform_eval import traces

DATA = TEST_DATA / "traces"
ASK = "I was charged twice for order 1234. Can I get a refund?"
HANDOFF = [
    ("user", "text", ASK),
    ("triage_agent", "call", ("transfer_to_billing_agent", {})),
    ("triage_agent", "response", ("transfer_to_billing_agent", {"assistant": "billing_agent"})),
    ("billing_agent", "call", ("lookup_order", {"order_id": "1234"})),
    (
        "billing_agent",
        "response",
        ("lookup_order", {"order_id": "1234", "charges": [42.0, 42.0]}),
    ),
    ("billing_agent", "call", ("refund_charge", {"order_id": "1234", "amount": 42.0})),
    ("billing_agent", "response", ("refund_charge", {"refunded": 42.0})),
    ("billing_agent", "text", "I refunded the duplicate charge of $42.00 on order 1234."),
]


def _spans(name: str) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((DATA / name).read_text())
    return loaded


def _write(tmp_path: Path, spans: Any) -> Path:
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(spans))
    return path


def test_a_handoff_only_in_the_model_output_is_a_call_of_the_agent_that_handed_off() -> None:
    conversation = _only(DATA / "openai_agents_handoff.traceloop.json")
    assert _events(conversation) == HANDOFF
    assert [turn.turn_index for turn in conversation.agent_data.turns or []] == [0]
    assert set(conversation.agent_data.agents or {}) == {"triage_agent", "billing_agent"}
    assert conversation.notes == []


def test_a_handoff_without_a_workflow_span_stays_one_turn(tmp_path: Path) -> None:
    # Some exporters leave out the workflow span: the two agents are then top-level spans one
    # after another, on the same question, and still one turn.
    spans = [
        s for s in _spans("openai_agents_handoff.traceloop.json") if s["name"] != "Agent Workflow"
    ]
    for span in spans:
        if span["parent_span_id"] == "a000000000000001":
            span["parent_span_id"] = None
    conversation = _only(_write(tmp_path, spans))
    assert _events(conversation) == HANDOFF
    assert len(conversation.agent_data.turns or []) == 1


def test_top_level_agents_on_different_questions_are_different_turns(tmp_path: Path) -> None:
    def agent(span_id: str, start: int, question: str, answer: str) -> list[dict[str, Any]]:
        return [
            {
                "trace_id": "t",
                "span_id": span_id,
                "name": "invoke_agent helper",
                "start_time": start,
                "attributes": {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "helper",
                },
            },
            {
                "trace_id": "t",
                "span_id": f"{span_id}-llm",
                "parent_span_id": span_id,
                "name": "chat m",
                "start_time": start + 1,
                "attributes": {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.input.messages": json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": question}]}]
                    ),
                    "gen_ai.output.messages": json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
                    ),
                },
            },
        ]

    path = _write(tmp_path, [*agent("a", 1, "Hi?", "Hello."), *agent("b", 10, "Bye?", "Bye.")])
    turns = _only(path).agent_data.turns or []
    assert [[(e.author, e.content.parts[0].text) for e in t.events or []] for t in turns] == [
        [("user", "Hi?"), ("helper", "Hello.")],
        [("user", "Bye?"), ("helper", "Bye.")],
    ]


def test_a_handoff_span_and_its_call_are_one_handoff() -> None:
    conversation = _only(DATA / "openai_agents_handoff.openinference.json")
    assert _events(conversation) == HANDOFF
    # The chain at the top ran the agents: it is the workflow, not an agent of its own.
    assert set(conversation.agent_data.agents or {}) == {"triage_agent", "billing_agent"}
    assert conversation.notes == []


def test_a_handoff_span_with_no_recorded_call_is_noted_not_invented(tmp_path: Path) -> None:
    spans = _spans("openai_agents_handoff.openinference.json")
    # The triage model's output without its transfer call: only the handoff span is left.
    [triage_llm] = [s for s in spans if s["context"]["span_id"] == "0xb000000000000003"]
    attributes = triage_llm["attributes"]
    for key in [k for k in attributes if k.startswith("llm.output_messages.0.message.tool_calls")]:
        del attributes[key]
    conversation = _only(_write(tmp_path, spans))
    events = _events(conversation)
    assert not any(kind == "call" and "handoff" in what[0] for _, kind, what in events)
    assert [what[0] for _, kind, what in events if kind == "call"] == [
        "lookup_order",
        "refund_charge",
    ]
    assert any(
        "a handoff from triage_agent to billing_agent" in note for note in conversation.notes
    )


def test_a_tool_carried_out_over_a2a_by_a_remote_agent() -> None:
    conversation = _only(DATA / "langgraph_supervisor_a2a.otlp.json")
    weather = "Clear skies in Paris tonight, 18°C."
    assert _events(conversation) == [
        (
            "user",
            "text",
            "What's the weather in Paris tonight, and book me a table at Le Petit Bistro for 8pm?",
        ),
        ("LangGraph", "call", ("ask_weather_agent", {"query": "weather in Paris tonight"})),
        # The remote agent answers between the call and its answer, under its own name.
        ("weather_agent", "text", weather),
        ("LangGraph", "response", ("ask_weather_agent", {"result": weather})),
        ("LangGraph", "call", ("book_table", {"restaurant": "Le Petit Bistro", "time": "20:00"})),
        ("LangGraph", "response", ("book_table", {"confirmation": "LPB-2000"})),
        (
            "LangGraph",
            "text",
            f"{weather} Your table at Le Petit Bistro is booked for 8pm (LPB-2000).",
        ),
    ]
    # The remote side's own invocation span is part of this turn, not a turn of its own.
    assert len(conversation.agent_data.turns or []) == 1
    agents = conversation.agent_data.agents or {}
    assert agents["weather_agent"].description == "Answers questions about the weather."


def test_a_call_in_the_model_output_and_in_a_tool_span_is_one_call() -> None:
    conversation = _only(DATA / "openai_agents_handoff.traceloop.json")
    assert conversation.tool_calls == ["transfer_to_billing_agent", "lookup_order", "refund_charge"]


@pytest.mark.corpus
def test_agents_used_as_tools_answer_between_the_call_and_its_answer() -> None:
    conversation = _only(CORPUS / "traces" / "strands-evals_openai_agents_genai_live_spans.json")
    order = [
        (author, kind, what[0] if kind != "text" else "")
        for author, kind, what in _events(conversation)
    ]
    call = order.index(("coordinator", "call", "ask_research_specialist"))
    answer = order.index(("coordinator", "response", "ask_research_specialist"))
    inner = [author for author, _, _ in order[call + 1 : answer]]
    assert inner and set(inner) == {"research_specialist"}
    call = order.index(("coordinator", "call", "ask_math_specialist"))
    answer = order.index(("coordinator", "response", "ask_math_specialist"))
    assert {author for author, _, _ in order[call + 1 : answer]} == {"math_specialist"}


def test_the_fixtures_are_what_the_loaders_take() -> None:
    # Every fixture reads through the public loader, whatever its container.
    for path in sorted(DATA.glob("*.json")):
        assert len(traces.load_conversations(path)) == 1, path


def test_a_supervisors_routing_calls_only_in_its_models_output_are_kept_from_table_rows() -> None:
    """agntcy's stack (ioa_observe on OpenLLMetry) exported from the collector's ClickHouse
    ``otel_traces`` table: the supervisor's ``Router`` calls are only in its model's output
    (``gen_ai.completion.0.tool_calls``), the worker's tool is also a Traceloop tool span whose
    entity input is a Python literal and whose output is a LangChain ToolMessage; an empty
    answer recorded JSON-encoded (``""``) is no text; an agent span in a trace of its own
    (same session) is no turn of its own."""
    conversation = _only(DATA / "langgraph_supervisor.clickhouse.json")
    assert [(kind, what) for _, kind, what in _events(conversation)] == [
        ("text", "How warm is it in Lisbon today?"),
        ("call", ("Router", {"next": "researcher"})),
        ("call", ("get_weather", {"city": "Lisbon"})),
        ("response", ("get_weather", {"result": "24 degrees and sunny"})),
        ("text", "It is 24 degrees and sunny in Lisbon today."),
        ("call", ("Router", {"next": "FINISH"})),
    ]
    assert len(conversation.agent_data.turns or []) == 1


def test_table_rows_give_times_durations_and_events_in_either_column_shape() -> None:
    from platform_eval.traces.containers import spans_from_data

    rows = _spans("langgraph_supervisor.clickhouse.json")
    spans = {span.span_id: span for span in spans_from_data(rows)}
    workflow, chat = spans["a000000000000001"], spans["a000000000000002"]
    assert workflow.parent_id is None and chat.parent_id == workflow.span_id
    # An ISO 8601 start and one in milliseconds; the Duration column is nanoseconds.
    assert workflow.start_ns == 1751045581 * 10**9
    assert workflow.end_ns - workflow.start_ns == 5 * 10**9
    assert chat.start_ns == 1751045581100 * 10**6 and chat.end_ns == chat.start_ns + 400_000_000
    agent = spans["b000000000000001"]
    assert [(e.name, e.time_ns) for e in agent.events] == [
        ("agent_start_event", 1751045581500 * 10**6),
        ("agent_end_event", 1751045582900 * 10**6),
    ]
    assert agent.events[0].attributes == {"agent_name": "research", "type": "agent"}
    # The same events as objects (an export that keeps the nested column as one).
    nested = {k: v for k, v in rows[-1].items() if not k.startswith("Events.")} | {
        "Events": [
            {"Timestamp": 1751045581500, "Name": "agent_start_event", "Attributes": {"a": "1"}}
        ]
    }
    (span,) = spans_from_data([nested])
    assert [(e.name, e.time_ns, e.attributes) for e in span.events] == [
        ("agent_start_event", 1751045581500 * 10**6, {"a": "1"})
    ]
