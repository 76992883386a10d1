"""Free-form objects (``metadata``, a prompt's or a response's ``value``) come back exactly as they were sent.

The API types them ``any`` (a protobuf Struct): their keys are the user's, never re-cased, and
their values keep their JSON types, from the client through the emulator and back.
"""

from __future__ import annotations

from typing import Any

import httpx
from factories import request_item

from platform_eval.emulator import Emulator

FREE = {
    "snake_key": {"Mixed_Case": [1, {"inner_key": None, "x-y": True, "n": 2.5}]},
    "camelKey": "v",
    "ünïcode_kéy": [],
    "__dunder__": {},
}


def _served(emulator: Emulator, name: str) -> dict[str, Any]:
    response = httpx.get(f"{emulator.url}/v1beta1/{name}")
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    return body


def test_free_form_objects_are_stored_and_served_as_sent(client: Any, emulator: Emulator) -> None:
    item_body = request_item("free", candidates=[{"candidate": "a", "value": FREE}])
    item_body["metadata"] = FREE
    item_body["evaluationRequest"]["prompt"] = {"value": FREE}
    item = client.create_item(item_body)
    evaluation_set = client.create_set(
        {"displayName": "s", "evaluationItems": [item.name], "metadata": FREE}
    )
    run = client.create_run(
        {
            "dataSource": {"evaluationSet": evaluation_set.name},
            "metadata": FREE,
            "evaluationConfig": {"metrics": [{"metric": "exact_match"}]},
        }
    )
    experiment = client.create_experiment({"displayName": "e", "metadata": FREE})

    served_item = _served(emulator, str(item.name))
    assert served_item["metadata"] == FREE
    assert served_item["evaluationRequest"]["prompt"]["value"] == FREE
    assert served_item["evaluationRequest"]["candidateResponses"][0]["value"] == FREE
    assert _served(emulator, str(evaluation_set.name))["metadata"] == FREE
    served_run = _served(emulator, str(run.name))
    # A run's keeps the service's pipeline id beside what was sent (every recorded run has one).
    pipeline = served_run["metadata"].pop("pipeline_id")
    assert pipeline.isdigit() and served_run["metadata"] == FREE
    assert _served(emulator, str(experiment.name))["metadata"] == FREE

    # And as the client reads them back, in Python and on the wire.
    again = client.get_item(item)
    assert again.metadata == FREE
    assert again.to_wire()["evaluationRequest"]["prompt"]["value"] == FREE
    assert client.get_run(run).to_wire()["metadata"] == {**FREE, "pipeline_id": pipeline}
