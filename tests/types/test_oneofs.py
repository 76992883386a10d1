"""Proto oneofs: a user's input may set one field of each, the emulator refuses two (as the
service does), and a server response that sets two is still read."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from platform_eval import types as t
from platform_eval.emulator import Emulator

AGENT_DATA = {"turns": [{"turnIndex": 0, "events": [{"author": "a", "content": {"parts": []}}]}]}

TWO_OF_A_ONEOF: list[tuple[type[Any], dict[str, Any], str]] = [
    (t.CandidateResponse, {"text": "hi", "agentData": AGENT_DATA}, "text and agentData"),
    (t.CandidateResponse, {"text": "hi", "value": {"a": 1}}, "text and value"),
    (t.EvaluationPrompt, {"text": "q", "promptTemplateData": {"values": {}}}, "text and prompt"),
    (
        t.EvaluationRunDataSource,
        {"evaluationSet": "s", "evaluationSetRevision": "r"},
        "evaluationSet and evaluationSetRevision",
    ),
    (
        t.OutputConfig,
        {"gcsDestination": {"outputUriPrefix": "gs://b/"}, "bigqueryDestination": {}},
        "gcsDestination and bigqueryDestination",
    ),
    (
        t.EvaluationRunMetric,
        {"metric": "m", "predefinedMetricSpec": {}, "llmBasedMetricSpec": {}},
        "predefinedMetricSpec and llmBasedMetricSpec",
    ),
]


@pytest.mark.parametrize(("model", "body", "named"), TWO_OF_A_ONEOF)
def test_user_input_with_two_fields_of_a_oneof_is_refused(
    model: type[Any], body: dict[str, Any], named: str
) -> None:
    with pytest.raises(ValidationError, match=named):
        model.model_validate(body)


@pytest.mark.parametrize(("model", "body", "named"), TWO_OF_A_ONEOF)
def test_a_server_response_with_two_fields_of_a_oneof_is_still_read(
    model: type[Any], body: dict[str, Any], named: str
) -> None:
    parsed = model.from_wire(body)
    assert parsed.to_wire().keys() == body.keys()


def test_each_field_alone_is_accepted() -> None:
    for body in ({"text": "hi", "events": [{"parts": [{"text": "x"}]}]}, {"agentData": AGENT_DATA}):
        t.CandidateResponse.model_validate(body)


def test_the_emulator_refuses_a_body_that_sets_two_with_the_field_named(
    emulator: Emulator, project: str
) -> None:
    item = {
        "displayName": "x",
        "evaluationItemType": "REQUEST",
        "evaluationRequest": {
            "prompt": {"text": "q"},
            "candidateResponses": [{"candidate": "c", "text": "a", "agentData": AGENT_DATA}],
        },
    }
    url = f"{emulator.url}/v1beta1/projects/{project}/locations/us-central1/evaluationItems"
    response = httpx.post(url, json=item)
    assert response.status_code == 400
    error = response.json()["error"]
    assert "text and agentData of CandidateResponse are alternatives" in error["message"]
    violations = [
        v
        for detail in error["details"]
        for v in detail.get("fieldViolations", [])
        if detail["@type"].endswith("BadRequest")
    ]
    assert [v["field"] for v in violations] == ["evaluationRequest.candidateResponses[0]"]
