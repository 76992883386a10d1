"""Spans of real google-adk runs, in every telemetry schema, read back as the same conversation.

Each test records a real ADK Runner (scripted model, no network) and checks that the spans, the
session of the same run, and google-adk's own session-to-invocation conversion agree turn by
turn: the user's message, every tool call with its arguments, and the final answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from adk_runs import EXPECTED, QUESTIONS, Recording, Turn, record, turns_of
from google.adk.evaluation.eval_case import get_all_tool_calls
from google.adk.evaluation.evaluation_generator import EvaluationGenerator
from google.adk.sessions import Session
from paths import RECORDINGS

from platform_eval.formats import FormatError
from platform_eval.traces import Conversation, load_conversations, session_to_conversation


def _adk_turns(session: dict[str, Any]) -> list[Turn]:
    events = Session.model_validate(session).events
    out = []
    for invocation in EvaluationGenerator.convert_events_to_eval_invocations(events):
        user = "".join(p.text or "" for p in invocation.user_content.parts or [])
        final = (
            "".join(p.text or "" for p in (invocation.final_response.parts or []))
            if invocation.final_response
            else ""
        )
        uses = get_all_tool_calls(invocation.intermediate_data)
        calls = [(c.name, dict(c.args or {})) for c in uses if c.name != "transfer_to_agent"]
        out.append((user, calls, final))
    return out


def _from_spans(recording: Recording, tmp_path: Path) -> list[Conversation]:
    path = tmp_path / "spans.otlp.json"
    path.write_text(json.dumps(recording.otlp_json()))
    return load_conversations(path)


@pytest.mark.parametrize("schema", [2, 1], ids=["schema-v2-default", "schema-v1"])
@pytest.mark.parametrize("sub_agent", [False, True], ids=["one-agent", "sub-agent"])
def test_spans_session_and_adk_agree(schema: int, sub_agent: bool, tmp_path: Path) -> None:
    recording = record(schema=schema, content=True, sub_agent=sub_agent)
    (from_spans,) = _from_spans(recording, tmp_path)
    from_session = session_to_conversation(recording.session)
    assert _adk_turns(recording.session) == EXPECTED
    assert turns_of(from_session) == EXPECTED
    # Three traces, one per user message, make one conversation of three turns.
    assert turns_of(from_spans) == EXPECTED
    assert from_spans.first_user_message == QUESTIONS[0]
    authors = {e.author for t in from_spans.agent_data.turns for e in t.events}
    assert "weather_agent" in authors
    if sub_agent:
        assert "concierge" in (from_spans.agent_data.agents or {})
    # Every tool response follows its call, paired by id.
    for turn in from_spans.agent_data.turns:
        parts = [p for e in turn.events for p in (e.content.parts or [])]
        calls = [p.function_call for p in parts if p.function_call]
        answers = [p.function_response for p in parts if p.function_response]
        assert [(a.id, a.name) for a in answers] == [(c.id, c.name) for c in calls]
        assert all(c.id for c in calls)


def test_schema_v2_records_the_agents_instruction_and_tools(tmp_path: Path) -> None:
    (conversation,) = _from_spans(record(schema=2, content=True, turns=1), tmp_path)
    agent = (conversation.agent_data.agents or {})["weather_agent"]
    assert "Answer questions about the weather." in (agent.instruction or "")
    assert [d.name for t in agent.tools or [] for d in t.function_declarations or []] == [
        "get_weather"
    ]


def test_spans_keep_the_call_ids_and_tool_declarations_of_the_run(tmp_path: Path) -> None:
    """ADK's GenAI spans write a call the model gave no id as ``<name>_<n>``, then run it as
    ``adk-...``, the id its session's events carry: read back, the calls keep the run's ids and
    the agent its tools as the model was offered them (with their parameters), so that a judge
    is shown the same conversation as from the session."""
    recording = record(schema=2, content=True)
    (from_spans,) = _from_spans(recording, tmp_path)
    from_session = session_to_conversation(recording.session)

    def call_ids(conversation: Conversation) -> list[str | None]:
        return [
            p.function_call.id
            for t in conversation.agent_data.turns or []
            for e in t.events or []
            for p in (e.content.parts if e.content else None) or []
            if p.function_call
        ]

    assert call_ids(from_spans) == call_ids(from_session)
    assert all((i or "").startswith("adk-") for i in call_ids(from_spans))
    agent = (from_spans.agent_data.agents or {})["weather_agent"]
    [declaration] = [d for t in agent.tools or [] for d in t.function_declarations or []]
    assert declaration.name == "get_weather"
    schema = declaration.parameters_json_schema or declaration.parameters
    assert schema is not None and "city" in json.dumps(schema, default=str)


@pytest.mark.parametrize("schema", [2, 1], ids=["schema-v2-default", "schema-v1"])
def test_spans_without_content_are_a_loud_error_not_a_zero_score(
    schema: int, tmp_path: Path
) -> None:
    recording = record(schema=schema, content=False, turns=1)
    with pytest.raises(FormatError) as caught:
        _from_spans(recording, tmp_path)
    message = str(caught.value)
    assert "no message content was recorded" in message
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in message


def test_spans_with_no_agent_say_what_they_found(tmp_path: Path) -> None:
    spans = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {"traceId": "ab" * 16, "spanId": f"{i:016x}", "name": f"GET /{i}"}
                            for i in range(37)
                        ]
                    }
                ]
            }
        ]
    }
    path = tmp_path / "http.json"
    path.write_text(json.dumps(spans))
    with pytest.raises(FormatError, match=r"37 spans, none of them an agent.*GET /0"):
        load_conversations(path)


@pytest.mark.parametrize("stem", ["one_agent", "sub_agent"])
def test_adk_1x_spans_read_as_its_session(stem: str) -> None:
    """google-adk 1.10's spans (``invocation``, ``agent_run [agent]``, ``call_llm``), recorded
    from a real Runner by tools/record_adk.py, since 1.x cannot be installed beside 2.x."""
    folder = RECORDINGS / "adk-1.10.0"
    assert (folder / "version.txt").read_text().strip() == "google-adk 1.10.0"
    session = json.loads((folder / f"{stem}.session.json").read_text())
    (from_spans,) = load_conversations(folder / f"{stem}.spans.otlp.json")
    names = {s["name"] for s in _span_names(folder / f"{stem}.spans.otlp.json")}
    assert "invocation" in names and "agent_run [weather_agent]" in names
    assert _adk_turns(session) == EXPECTED
    assert turns_of(session_to_conversation(session)) == EXPECTED
    assert turns_of(from_spans) == EXPECTED
    assert from_spans.notes == []
    if stem == "sub_agent":
        authors = {e.author for t in from_spans.agent_data.turns or [] for e in t.events or []}
        assert {"concierge", "weather_agent"} <= authors


def _span_names(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    return [s for r in data["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]


_QUESTION = {"role": "user", "parts": [{"text": "Capital of France?"}]}
_ANSWER = {"role": "model", "parts": [{"text": "Paris."}]}


def _capital_session(middle: dict[str, Any], **on_answer: Any) -> dict[str, Any]:
    """A one-turn session: the question, ``middle`` (an event of the agent's), the answer."""
    return {
        "id": "capital",
        "appName": "app",
        "userId": "u",
        "events": [
            {"author": "user", "invocationId": "i1", "content": _QUESTION},
            {"author": "agent", "invocationId": "i1", **middle},
            {"author": "agent", "invocationId": "i1", "content": _ANSWER, **on_answer},
        ],
    }


def _capital_set(folder: Path, **case: Any) -> Path:
    """The eval set of that session's case, written in ``folder``."""
    turn = {"invocation_id": "i1", "user_content": _QUESTION, "final_response": _ANSWER}
    eval_set = {
        "eval_set_id": "s",
        "eval_cases": [{"eval_id": "capital", "conversation": [turn], **case}],
    }
    path = folder / "s.evalset.json"
    path.write_text(json.dumps(eval_set))
    return path


def test_grounding_metadata_is_kept_and_an_event_of_only_grounding_is_not_dropped(
    emulator: Any, project: str, tmp_path: Path
) -> None:
    """ADK's judged criteria read a model's grounding metadata from the session: the reader
    keeps it (AgentEvent has no field for it) and the upload puts it in the item's metadata."""
    from platform_eval import jobs
    from platform_eval.traces import session_to_conversation
    from platform_eval.types import CANDIDATE_GROUNDING_KEY

    grounding = {"webSearchQueries": ["capital of France"]}
    session = _capital_session({"groundingMetadata": grounding}, groundingMetadata=grounding)
    conversation = session_to_conversation(session)
    assert conversation.grounding == {"i1": {"1": grounding, "2": grounding}}
    (turn,) = conversation.agent_data.turns
    # Kept, with an empty content: the service requires one.
    assert len(turn.events) == 3 and turn.events[1].content.parts == []
    path = tmp_path / "capital.json"
    path.write_text(json.dumps(session))
    with emulator.client(project) as client:
        uploaded = jobs.upload_traces(client, _capital_set(tmp_path), [path])
        (name,) = uploaded.evaluation_items
        item = client.get_item(name)
    assert item.metadata[CANDIDATE_GROUNDING_KEY] == {"agent": conversation.grounding}


def test_a_state_change_alone_in_a_turn_uploads_and_its_state_is_read(
    emulator: Any, project: str, tmp_path: Path
) -> None:
    """An agent whose callback writes state records an event with no content: the service
    requires every event's content, so it is kept with an empty one (a 400 lost the case)."""
    from platform_eval import jobs
    from platform_eval.results import fetch_results

    session = _capital_session({"actions": {"stateDelta": {"city": "Paris"}}})
    (tmp_path / "capital.json").write_text(json.dumps(session))
    with emulator.client(project) as client:
        evaluation = jobs.evaluate(
            client,
            _capital_set(tmp_path, final_session_state={"city": "Paris"}),
            traces=[tmp_path / "capital.json"],
            metrics=["final_session_state_match", "response_match_score"],
            poll_interval=0.02,
        )
        results = fetch_results(client, evaluation.run, items=evaluation.results)
    assert {r.metric: r.score for r in results.rows} == {
        "final_session_state_match": 1.0,
        "response_match_score": 1.0,
    }
