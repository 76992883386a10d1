"""Trace conversions on the corpus: ADK sessions and OpenTelemetry spans in three shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPUS

from platform_eval import formats, traces

AGENTEVALS = CORPUS / "agentevals"
ADK = CORPUS / "adk"


def _only(path: Path) -> traces.Conversation:
    conversations = traces.load_conversations(path)
    assert len(conversations) == 1
    return conversations[0]


@pytest.mark.corpus
def test_helm_jaeger_trace_has_the_tool_call_its_response_and_the_answer() -> None:
    conversation = _only(AGENTEVALS / "samples_helm.json")
    assert conversation.tool_calls == ["helm_list_releases"]
    assert conversation.first_user_message == "list all Helm releases"
    events = conversation.agent_data.turns[0].events  # type: ignore[index]
    assert [e.author for e in events] == ["user", "helm_agent", "helm_agent", "helm_agent"]
    response = events[2].content.parts[0].function_response  # type: ignore[union-attr,index]
    assert response.name == "helm_list_releases" and "kagent" in json.dumps(response.response)  # type: ignore[union-attr]
    assert events[-1].content.parts[0].text.startswith("There are two Helm releases")  # type: ignore[union-attr,index]
    agent = conversation.agent_data.agents["helm_agent"]  # type: ignore[index]
    assert agent.description and agent.description.startswith("The Helm Expert")
    assert agent.instruction and agent.instruction.startswith("# Helm AI Agent System Prompt")
    assert agent.tools[0].function_declarations[0].name == "helm_list_releases"  # type: ignore[index]


@pytest.mark.corpus
def test_k8s_trace_calls_no_tool() -> None:
    conversation = _only(AGENTEVALS / "samples_k8s.json")
    assert conversation.tool_calls == []
    assert conversation.first_user_message == "list all Helm releases"


@pytest.mark.corpus
def test_helm_2_without_execute_tool_span_keeps_the_clarifying_answer() -> None:
    conversation = _only(AGENTEVALS / "samples_helm_2.json")
    assert conversation.tool_calls == []
    final = conversation.agent_data.turns[-1].events[-1]  # type: ignore[index]
    assert "namespace" in final.content.parts[0].text  # type: ignore[union-attr,index,operator]


@pytest.mark.corpus
def test_tempo_batches() -> None:
    conversation = _only(AGENTEVALS / "samples_tempo_export_with_batches.json")
    assert conversation.tool_calls == ["helm_list_releases"]
    assert conversation.first_user_message.strip() == "list all helm releases"  # type: ignore[union-attr]


@pytest.mark.corpus
def test_otlp_json_and_jsonl_from_the_same_spans(tmp_path: Path) -> None:
    tempo = json.loads((AGENTEVALS / "samples_tempo_export_with_batches.json").read_text())
    otlp = {"resourceSpans": tempo["batches"]}
    (tmp_path / "trace.json").write_text(json.dumps(otlp))
    (tmp_path / "trace.jsonl").write_text(
        "\n".join(json.dumps({"resourceSpans": [b]}) for b in tempo["batches"])
    )
    from_json = _only(tmp_path / "trace.json")
    from_jsonl = _only(tmp_path / "trace.jsonl")
    assert from_json.agent_data == from_jsonl.agent_data
    assert from_json.tool_calls == ["helm_list_releases"]


@pytest.mark.corpus
def test_several_traces_in_one_file_are_several_conversations(tmp_path: Path) -> None:
    merged = {"data": []}
    for name in ("samples_helm.json", "samples_k8s.json", "samples_helm_3.json"):
        merged["data"] += json.loads((AGENTEVALS / name).read_text())["data"]
    (tmp_path / "all.json").write_text(json.dumps(merged))
    conversations = traces.load_conversations(tmp_path / "all.json")
    assert [c.tool_calls for c in conversations] == [
        ["helm_list_releases"],
        [],
        ["helm_list_releases"],
    ]


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "turns", "calls"),
    [
        (
            "google__adk-samples__python__agents__customer-service__eval__sessions__123.session.json",
            11,
            6,
        ),
        (
            "jcarah__accelerate_context_engineering_workshop__evaluation__evaluation__results__session_cs_simple_17a89ba6_session_1dfda3d3-9dcc-4353-9427-200df0386598.json",
            2,
            1,
        ),
        (
            "google__adk-python__tests__integration__fixture__context_update_test__successful_test.session.json",
            2,
            1,
        ),
        (
            "google__adk-python__tests__integration__fixture__flow_complex_spark__sample.session.json",
            1,
            2,
        ),
        (
            # 18 invocations, 10 of them only a state change (no content): not turns.
            "google__adk-samples__python__agents__personalized-shopping__tests__example_interactions__text_search_floral_dress.session.json",
            8,
            None,
        ),
        (
            "google__adk-python__tests__integration__fixture__trip_planner_agent__initial.session.json",
            0,
            0,
        ),
    ],
)
def test_adk_sessions_group_events_by_invocation(name: str, turns: int, calls: int | None) -> None:
    raw = json.loads((ADK / name).read_text())
    conversation = _only(ADK / name)
    assert len(conversation.agent_data.turns or []) == turns
    raw_calls = sum(
        1
        for e in raw["events"]
        for p in ((e.get("content") or {}).get("parts") or [])
        if p.get("function_call") or p.get("functionCall")
    )
    assert len(conversation.tool_calls) == (calls if calls is not None else raw_calls) == raw_calls
    # The agents are the authors of content: an author of state changes only says nothing.
    authors = {e.get("author") for e in raw["events"] if e.get("content")} - {"user", None}
    assert set(conversation.agent_data.agents or {}) == authors


@pytest.mark.corpus
def test_camel_case_session_keeps_state_delta_and_times() -> None:
    name = "jcarah__accelerate_context_engineering_workshop__evaluation__evaluation__results__session_cs_simple_17a89ba6_session_1dfda3d3-9dcc-4353-9427-200df0386598.json"
    conversation = _only(ADK / name)
    events = [e for t in conversation.agent_data.turns or [] for e in t.events or []]
    assert any(e.state_delta and "customer_profile" in e.state_delta for e in events)
    assert all(e.event_time is not None for e in events)


@pytest.mark.corpus
def test_matching_by_first_user_message_and_by_mapping() -> None:
    eval_set = formats.load_eval_set(AGENTEVALS / "samples_eval_set_helm.json")
    conversations = [
        _only(AGENTEVALS / "samples_helm.json"),
        _only(AGENTEVALS / "samples_k8s.json"),  # same question, another agent
        _only(AGENTEVALS / "samples_helm_3.json"),  # another question
    ]
    report = traces.match_conversations(eval_set.eval_cases, conversations)
    assert [(m.eval_id, m.conversation.id) for m in report.matches] == [
        ("helm_list_releases", conversations[0].id),
        ("helm_list_releases", conversations[1].id),
    ]
    assert report.unmatched_conversations == [conversations[2].id]
    assert report.ambiguous == {"helm_list_releases": [conversations[0].id, conversations[1].id]}
    explicit = traces.match_conversations(
        eval_set.eval_cases, conversations, mapping={conversations[2].id: "helm_list_releases"}
    )
    assert [m.conversation.id for m in explicit.matches] == [conversations[2].id]
    assert explicit.unmatched_cases == []
    assert "traces without an eval case" in explicit.summary()


@pytest.mark.corpus
def test_not_a_trace_is_a_clear_error() -> None:
    with pytest.raises(
        formats.FormatError,
        match="expected an ADK session export or /run event list, or OpenTelemetry traces",
    ):
        traces.load_conversations(AGENTEVALS / "samples_eval_set_helm.json")


def test_a_genai_message_whose_parts_are_not_a_list_is_dropped_with_a_note() -> None:
    # Found by the loader fuzzer: `parts: true` raised a TypeError out of the trace reader.
    from platform_eval.traces import genai_semconv

    notes: list[str] = []
    value = [
        {"role": "assistant", "parts": True},
        {"role": "assistant", "parts": [{"type": "text", "content": "kept"}]},
    ]
    (kept,) = genai_semconv.messages(value, "span 1 output", notes)
    assert kept.parts[0].text == "kept"
    assert notes == ["span 1 output[0].parts: not a list; the message was dropped"]


def test_a_folder_s_hidden_files_are_not_recordings(tmp_path: Path) -> None:
    """A recordings folder the CLI ran in holds its .platform-eval store and manifests (JSON
    Lines): never read as traces, nor a .git's or a .venv's files."""
    from platform_eval.traces import trace_files

    shipped = Path(__file__).parents[1] / "data" / "traces" / "langgraph_supervisor_a2a.otlp.json"
    (tmp_path / "run.otlp.json").write_bytes(shipped.read_bytes())
    for hidden in (".platform-eval/manifests/a.jsonl", ".git/x.json", "sub/.cache.json"):
        (tmp_path / hidden).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / hidden).write_text("{}")
    (tmp_path / "sub" / "b.json").write_text("{}")
    assert trace_files([tmp_path]) == [tmp_path / "run.otlp.json", tmp_path / "sub" / "b.json"]


def test_tool_definitions_read_as_the_tools_the_model_was_offered() -> None:
    """``gen_ai.tool.definitions`` -> google-genai Tools: consecutive functions in one Tool (as
    ADK declares them), a JSON Schema as ``parameters_json_schema``, a google-genai Schema (its
    types upper-case) as ``parameters``, a built-in tool by its kind; nothing else is made up."""
    from platform_eval.traces.genai_semconv import tool_definitions

    definitions = [
        {"type": "function", "name": "f", "description": "d", "parameters": {"type": "object"}},
        {"type": "function", "name": "g", "parameters": {"type": "OBJECT"}},
        {"type": "google_search", "name": "google_search"},
        {"type": "function", "name": "h"},
        {"type": "no_such_tool", "name": "x"},
        "not a definition",
    ]
    tools = tool_definitions(json.dumps(definitions))
    assert tools is not None
    dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    assert dumped == [
        {
            "functionDeclarations": [
                {"description": "d", "name": "f", "parametersJsonSchema": {"type": "object"}},
                {"name": "g", "parameters": {"type": "OBJECT"}},
            ]
        },
        {"googleSearch": {}},
        {"functionDeclarations": [{"name": "h"}]},
    ]
    assert tool_definitions(None) is None and tool_definitions("[]") is None
