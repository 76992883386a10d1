from __future__ import annotations

import pytest
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
