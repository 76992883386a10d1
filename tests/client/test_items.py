from __future__ import annotations

from typing import Any

import pytest
from factories import agent_data, call, reply, request_item, user

from platform_eval import errors
from platform_eval import types as t


def test_create_get_delete_item_with_dict(client: Any) -> None:
    created = client.create_item(request_item("first", golden={"text": "hi"}))
    assert isinstance(created, t.EvaluationItem)
    assert created.name.startswith(f"{client.parent}/evaluationItems/")
    assert created.evaluation_item_type is t.EvaluationItemType.REQUEST
    # As the service's create answer (cloud-custodian's flight): no createTime; a GET has it.
    assert created.create_time is None

    by_name = client.get_item(created.name)
    by_id = client.get_item(created.id)
    by_object = client.get_item(created)
    assert by_name == by_id == by_object
    assert by_name.create_time is not None
    assert by_name.model_copy(update={"create_time": None}) == created

    client.delete_item(created.id)
    with pytest.raises(errors.NotFound):
        client.get_item(created.name)


def test_create_item_with_typed_object_keeps_agent_data(client: Any) -> None:
    item = t.EvaluationItem(
        display_name="typed",
        evaluation_item_type=t.EvaluationItemType.REQUEST,
        labels={"suite": "smoke"},
        evaluation_request=t.EvaluationRequest(
            candidate_responses=[
                t.CandidateResponse(
                    candidate="agent-v2",
                    agent_data=t.AgentData.model_validate(
                        agent_data([user("hi"), call("lookup", q="x"), reply("done")])
                    ),
                )
            ],
            rubrics={
                "quality": t.RubricGroup(
                    group_id="quality", rubrics=[t.Rubric.of("Is polite", rubric_id="r1")]
                )
            },
        ),
    )
    created = client.create_item(item)
    assert created.labels == {"suite": "smoke"}
    assert created.evaluation_request == item.evaluation_request
    fetched = client.get_item(created.id)
    events = fetched.evaluation_request.candidate_responses[0].agent_data.turns[0].events
    assert events[1].content.parts[0].function_call.name == "lookup"
    assert events[1].content.parts[0].function_call.args == {"q": "x"}


def test_item_without_type_or_payload_is_rejected_by_the_server(client: Any) -> None:
    with pytest.raises(errors.InvalidArgument, match="evaluationItemType"):
        client.create_item({"displayName": "x", "evaluationRequest": {"prompt": {"text": "q"}}})
    with pytest.raises(errors.InvalidArgument, match="payload"):
        client.create_item({"displayName": "x", "evaluationItemType": "REQUEST"})


def test_item_typo_is_caught_before_sending(client: Any) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="evaluationRequst"):
        client.create_item({"displayName": "x", "evaluationRequst": {}})


def test_bad_names_are_rejected_without_a_request(client: Any) -> None:
    with pytest.raises(ValueError, match="not a valid id of evaluationItems"):
        client.get_item("../../etc/passwd")
    with pytest.raises(ValueError, match="not a resource name of evaluationItems"):
        client.get_item("projects/p/locations/l/evaluationSets/1")


def test_request_id_deduplicates_creates(client: Any) -> None:
    first = client.create_item(request_item("dedup"), request_id="fixed-id-1")
    second = client.create_item(request_item("dedup"), request_id="fixed-id-1")
    assert first.name == second.name
    assert len(list(client.list_items())) == 1
