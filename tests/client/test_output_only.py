"""Output-only fields a request sets are ignored, as AIP-203 asks of the service.

A resource read and sent back as it was is accepted; what only the service writes (a run's
state and results, an item's evaluation response, errors, times) stays the service's.
"""

from __future__ import annotations

from typing import Any

import httpx
from factories import request_item

from platform_eval import types as t
from platform_eval.emulator import Emulator
from platform_eval.types._base import clear_output_only


def _post(emulator: Emulator, parent: str, collection: str, body: dict[str, Any]) -> Any:
    return httpx.post(f"{emulator.url}/v1beta1/{parent}/{collection}", json=body)


def test_a_finished_run_sent_back_as_a_create_starts_afresh(
    sync_client: Any, emulator: Emulator
) -> None:
    answered = request_item("x", golden={"text": "x"}, candidates=[{"candidate": "a", "text": "x"}])
    item = sync_client.create_item(answered)
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    run = sync_client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
    done = sync_client.wait_for_run(run, timeout=30, poll_interval=0.05)
    assert done.state == "SUCCEEDED" and done.evaluation_results is not None

    served = httpx.get(f"{emulator.url}/v1beta1/{done.name}").json()
    again = _post(emulator, sync_client.parent, "evaluationRuns", served)
    assert again.status_code == 200, again.text
    body = again.json()
    assert body["name"] != done.name
    assert body["state"] == "PENDING"
    # The service's placeholder, not the finished run's time (cloud-custodian's flight).
    assert "evaluationResults" not in body and body["completionTime"] == "1970-01-01T00:00:00Z"
    assert "createTime" not in body  # as the service's create answers; a GET has its own
    fresh = httpx.get(f"{emulator.url}/v1beta1/{body['name']}").json()
    assert fresh["createTime"] != served["createTime"]


def test_an_items_output_only_fields_are_not_stored(sync_client: Any, emulator: Emulator) -> None:
    body = request_item("x", candidates=[{"candidate": "a", "text": "t"}])
    body["evaluationRequest"]["candidateResponses"][0]["error"] = {"code": 13, "message": "no"}
    body["error"] = {"code": 3, "message": "mine"}
    body["createTime"] = "2001-01-01T00:00:00Z"
    response = _post(emulator, sync_client.parent, "evaluationItems", body)
    assert response.status_code == 200, response.text
    stored = httpx.get(f"{emulator.url}/v1beta1/{response.json()['name']}").json()
    assert "error" not in stored
    assert "error" not in stored["evaluationRequest"]["candidateResponses"][0]
    assert stored["createTime"] != "2001-01-01T00:00:00Z"


def test_a_result_item_cannot_bring_its_own_evaluation_response(
    sync_client: Any, emulator: Emulator
) -> None:
    body = {
        "displayName": "r",
        "evaluationItemType": "RESULT",
        "evaluationResponse": {"candidateResults": [{"candidate": "a", "score": 1.0}]},
    }
    response = _post(emulator, sync_client.parent, "evaluationItems", body)
    assert response.status_code == 400
    assert "evaluationResponse is output only" in response.json()["error"]["message"]
    # With its payload in Cloud Storage, a RESULT item is accepted.
    gcs = {"displayName": "r", "evaluationItemType": "RESULT", "gcsUri": "gs://bucket/result.json"}
    assert _post(emulator, sync_client.parent, "evaluationItems", gcs).status_code == 200


def test_clearing_walks_only_where_an_output_only_field_can_be() -> None:
    run = t.EvaluationRun.model_validate(
        {
            "state": "SUCCEEDED",
            "evaluationSetSnapshot": "projects/p/locations/l/evaluationSets/1",
            "evaluationConfig": {"metrics": [{"metric": "exact_match"}]},
        }
    )
    assert sorted(clear_output_only(run)) == ["evaluationSetSnapshot", "state"]
    assert run.to_wire() == {"evaluationConfig": {"metrics": [{"metric": "exact_match"}]}}
    assert clear_output_only(run) == []
