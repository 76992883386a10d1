from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from platform_eval import types as t


def test_camel_on_the_wire_and_both_spellings_accepted_at_every_depth() -> None:
    snake = t.EvaluationItem.model_validate(
        {
            "display_name": "x",
            "evaluation_item_type": "REQUEST",
            "evaluation_request": {
                "prompt": {"text": "hi"},
                "golden_response": {"text": "hello"},
                "candidate_responses": [
                    {
                        "candidate": "a",
                        "agent_data": {
                            "turns": [
                                {
                                    "turn_index": 0,
                                    "events": [
                                        {
                                            "author": "a",
                                            "state_delta": {"k": 1},
                                            "content": {
                                                "role": "model",
                                                "parts": [
                                                    {"function_call": {"name": "f", "args": {}}}
                                                ],
                                            },
                                        }
                                    ],
                                }
                            ]
                        },
                    }
                ],
            },
        }
    )
    wire = snake.to_wire()
    assert wire["displayName"] == "x"
    request = wire["evaluationRequest"]
    event = request["candidateResponses"][0]["agentData"]["turns"][0]["events"][0]
    assert event["stateDelta"] == {"k": 1}
    assert event["content"]["parts"][0]["functionCall"]["name"] == "f"
    assert request["goldenResponse"] == {"text": "hello"}
    assert t.EvaluationItem.model_validate(wire) == snake


def test_unknown_key_in_user_input_is_an_error_naming_it_and_its_path() -> None:
    with pytest.raises(ValidationError) as caught:
        t.EvaluationItem.model_validate(
            {"evaluationRequest": {"prompt": {"txt": "hi"}}, "evaluationItemType": "REQUEST"}
        )
    message = str(caught.value)
    assert "evaluationRequest.prompt" in message
    assert "'txt'" in message and "did you mean 'text'" in message


def test_unknown_keyword_in_constructor_is_an_error() -> None:
    with pytest.raises(ValidationError, match="display_nam"):
        t.EvaluationItem(display_nam="x")  # type: ignore[call-arg]


def test_unknown_server_fields_survive_a_round_trip() -> None:
    wire = {
        "name": "projects/p/locations/l/evaluationItems/1",
        "evaluationItemType": "REQUEST",
        "brandNewField": {"nested": [1, 2]},
        "evaluationRequest": {"prompt": {"text": "x", "futurePromptField": True}},
    }
    item = t.EvaluationItem.from_wire(wire)
    assert item.to_wire() == wire


def test_unknown_genai_part_field_in_server_response_does_not_fail(
    caplog: pytest.LogCaptureFixture,
) -> None:
    item = t.EvaluationItem.from_wire(
        {
            "evaluationRequest": {
                "candidateResponses": [
                    {
                        "events": [
                            {"role": "model", "parts": [{"text": "a", "partFromTheFuture": 1}]}
                        ]
                    }
                ]
            }
        }
    )
    events = item.evaluation_request.candidate_responses[0].events  # type: ignore[union-attr,index]
    assert events is not None and events[0].parts[0].text == "a"  # type: ignore[index]
    assert "partFromTheFuture" in caplog.text


def test_enums_are_strings_and_unknown_values_are_kept() -> None:
    known = t.EvaluationRun.from_wire({"state": "SUCCEEDED"})
    assert known.state is t.EvaluationRunState.SUCCEEDED
    assert known.state == "SUCCEEDED"
    assert known.done
    future = t.EvaluationRun.from_wire({"state": "PAUSED_FOR_REVIEW"})
    assert future.state == "PAUSED_FOR_REVIEW"
    assert not future.done
    assert future.to_wire() == {"state": "PAUSED_FOR_REVIEW"}
    rubric = t.Rubric.model_validate({"importance": "CRITICAL_NEW"})
    assert rubric.importance == "CRITICAL_NEW"


def test_request_needs_a_prompt_or_an_agent_data_candidate() -> None:
    with pytest.raises(ValidationError, match="needs a prompt"):
        t.EvaluationRequest(golden_response=t.CandidateResponse(text="x"))
    with pytest.raises(ValidationError, match="needs a prompt"):
        t.EvaluationRequest(candidate_responses=[t.CandidateResponse(candidate="a", text="x")])
    assert t.EvaluationRequest(prompt=t.EvaluationPrompt(text="q"))
    offline = t.EvaluationRequest(
        candidate_responses=[t.CandidateResponse(candidate="a", agent_data=t.AgentData(turns=[]))]
    )
    assert t.request_mode_problem(offline) is None


def test_item_has_one_payload() -> None:
    with pytest.raises(ValidationError, match="one payload"):
        t.EvaluationItem(
            gcs_uri="gs://b/o",
            evaluation_request=t.EvaluationRequest(prompt=t.EvaluationPrompt(text="x")),
        )


def test_timestamps_serialize_as_rfc3339() -> None:
    item = t.EvaluationItem.from_wire({"createTime": "2026-10-02T15:01:23.045123Z"})
    assert item.create_time is not None and item.create_time.year == 2026
    assert item.to_wire()["createTime"].startswith("2026-10-02T15:01:23.045123")


def test_rubric_shorthand_and_description() -> None:
    rubric = t.Rubric.of("Mentions the city", rubric_id="r1", type="TEXT_CONTAINS")
    assert rubric.description == "Mentions the city"
    assert rubric.to_wire() == {
        "rubricId": "r1",
        "type": "TEXT_CONTAINS",
        "content": {"property": {"description": "Mentions the city"}},
    }


# -- google-genai Content built without its per-part validation (issue 11) -------------------

_text = st.text(max_size=8)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_b64 = st.binary(max_size=6).map(lambda b: base64.b64encode(b).decode())


def _spelled(camel: str, snake: str) -> st.SearchStrategy[str]:
    return st.sampled_from([camel, snake])


_part_fields = {
    ("text", "text"): _text,
    ("thought", "thought"): st.booleans(),
    ("thoughtSignature", "thought_signature"): _b64 | _text,
    ("functionCall", "function_call"): st.fixed_dictionaries(
        {}, optional={"name": _text, "id": _text, "args": st.dictionaries(_text, _json, max_size=3)}
    ),
    ("functionResponse", "function_response"): st.fixed_dictionaries(
        {}, optional={"name": _text, "id": _text, "response": st.dictionaries(_text, _json)}
    ),
    ("inlineData", "inline_data"): st.fixed_dictionaries(
        {}, optional={"mimeType": _text, "data": _b64, "displayName": _text}
    ),
    ("fileData", "file_data"): st.fixed_dictionaries(
        {}, optional={"fileUri": _text, "mimeType": _text}
    ),
    # Shapes the fast path leaves to google-genai: another field, a wrong type, a null.
    ("videoMetadata", "video_metadata"): st.just({"fps": 1.0}),
    ("text ", "text "): st.integers(),
}


@st.composite
def _parts(draw: st.DrawFn) -> dict[str, Any]:
    chosen = draw(st.lists(st.sampled_from(sorted(_part_fields)), max_size=3, unique=True))
    return {draw(_spelled(*names)): draw(_part_fields[names]) for names in chosen}


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "role": st.sampled_from(["user", "model"]) | st.none() | st.integers(),
            "parts": st.lists(_parts(), max_size=3),
        },
    )
)
@settings(max_examples=300, deadline=None)
@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_content_built_fast_is_the_content_google_genai_builds(value: dict[str, Any]) -> None:
    from google.genai import types as genai
    from pydantic import ValidationError

    from platform_eval.types._fast_content import fast_content

    fast = fast_content(value)
    try:
        slow = genai.Content.model_validate(value)
    except ValidationError:
        assert fast is None  # what google-genai refuses is left to it, to refuse
        return
    if fast is not None:
        assert fast == slow
        assert fast.model_fields_set == slow.model_fields_set
        assert fast.model_dump(mode="json") == slow.model_dump(mode="json")
        for ours, theirs in zip(fast.parts or [], slow.parts or [], strict=True):
            assert ours.model_fields_set == theirs.model_fields_set


def test_a_google_genai_model_the_fast_path_does_not_fit_takes_the_normal_path() -> None:
    """A google-genai release whose models changed (a default, a renamed field) must not break
    ``import platform_eval``: such a model is built by google-genai itself."""
    from google.genai import types as genai
    from pydantic import BaseModel

    from platform_eval.types import _fast_content as fast

    class Renamed(BaseModel):
        label: str | None = None

    class Defaulted(BaseModel):
        text: str | None = "x"

    fields = fast._spellings(text=fast._string)
    assert fast.fast_path_holds(genai.Part, fields)
    for changed in (Renamed, Defaulted):
        assert not fast.fast_path_holds(changed, fields)
        build = fast._model(changed, fields)
        assert build({"text": "hi"}) is fast._MISS


def test_construct_builds_what_google_genai_builds_from_valid_values() -> None:
    from google.genai import types as genai
    from pydantic import BaseModel

    from platform_eval.types._fast_content import construct

    call = genai.FunctionCall(name="get_weather", args={"city": "Paris"})
    built = construct(genai.Part, function_call=call)
    validated = genai.Part(function_call=call)
    assert built == validated and built.model_fields_set == validated.model_fields_set
    content = construct(genai.Content, role="model", parts=[built])
    assert content == genai.Content(role="model", parts=[validated])
    assert content.model_dump(mode="json") == genai.Content(
        role="model", parts=[validated]
    ).model_dump(mode="json")

    class Defaulted(BaseModel):  # a model not all of whose fields default to None
        text: str | None = "x"
        label: str | None = None

    assert construct(Defaulted, label="a") == Defaulted.model_construct(label="a")


@pytest.mark.parametrize(
    ("given", "served"),
    [
        ("2026-11-24T03:11:10.2742+01:00", "2026-11-24T02:11:10.274200Z"),
        ("2026-11-24T02:11:10Z", "2026-11-24T02:11:10Z"),
        ("2026-11-24T02:11:10.500+00:00", "2026-11-24T02:11:10.500Z"),
        ("2026-11-23T20:11:10.000001-06:00", "2026-11-24T02:11:10.000001Z"),
        ("2026-11-24T02:11:10", "2026-11-24T02:11:10Z"),
    ],
)
def test_timestamps_come_back_in_utc_with_the_services_precision(given: str, served: str) -> None:
    from platform_eval.types import AgentEvent

    assert AgentEvent.model_validate({"eventTime": given}).to_wire() == {"eventTime": served}
