"""``evaluationSets:import``: a set and its items in one call, inline or through Cloud Storage."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from factories import request_item
from google.api_core.exceptions import MethodNotImplemented

from platform_eval import Client, errors
from platform_eval._transport import ApiCall
from platform_eval.emulator import Emulator


def _destination(project: str) -> str:
    return f"gs://{project}-imports/payloads/"


def _items(count: int) -> list[dict[str, Any]]:
    return [
        request_item(f"case {i}", prompt=f"question {i}", labels={"case": str(i)})
        for i in range(count)
    ]


def test_an_inline_import_creates_the_set_and_its_items_in_order(client: Any, project: str) -> None:
    future = client.import_set(
        _items(3), display_name="imported", gcs_destination=_destination(project)
    )
    evaluation_set = future.wait()
    assert evaluation_set.display_name == "imported"
    assert len(evaluation_set.evaluation_items) == 3
    for index, name in enumerate(evaluation_set.evaluation_items):
        item = client.get_item(name)
        # The payload was written under the destination; reading the item reads it back.
        assert item.gcs_uri.startswith(f"{_destination(project)}evaluationItems/")
        assert item.evaluation_request.prompt.text == f"question {index}"
        assert item.labels == {"case": str(index)}
    assert client.get_set(evaluation_set.name) == evaluation_set


def test_an_imported_set_can_be_run(sync_client: Client, project: str) -> None:
    items = [
        request_item(
            "same", prompt="p", golden={"text": "a"}, candidates=[{"candidate": "c", "text": "a"}]
        )
    ]
    imported = sync_client.import_set(
        items, display_name="s", gcs_destination=_destination(project), wait=True
    )
    evaluation_set = imported.wait()
    run = sync_client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
    done = sync_client.wait_for_run(run, timeout=60, poll_interval=0.05)
    assert done.state == "SUCCEEDED"
    [result] = sync_client.get_results(done)
    assert result.evaluation_response.candidate_results[0].score == 1.0


def test_large_imports_go_through_cloud_storage(sync_client: Client, project: str) -> None:
    staging = f"gs://{project}-imports/staging/set.jsonl"
    evaluation_set = sync_client.import_set(
        _items(5), display_name="big", gcs_destination=_destination(project), staging_uri=staging
    ).wait()
    assert len(evaluation_set.evaluation_items) == 5
    bucket, name = staging[5:].split("/", 1)
    url = f"{sync_client.api_endpoint}/download/storage/v1/b/{bucket}/o/{name.replace('/', '%2F')}"
    staged = httpx.get(url, params={"alt": "media"}).content.splitlines()
    assert [json.loads(line)["displayName"] for line in staged] == [f"case {i}" for i in range(5)]

    again = sync_client.import_set(
        source_uri=staging, display_name="again", gcs_destination=_destination(project)
    ).wait()
    assert len(again.evaluation_items) == 5
    assert set(again.evaluation_items).isdisjoint(evaluation_set.evaluation_items)


def test_inline_data_over_4_mb_asks_for_a_staging_object(sync_client: Client) -> None:
    big = [request_item("x", prompt="y" * 1_000_000) for _ in range(5)]
    with pytest.raises(ValueError, match="over the 4 MB an inline import takes: pass staging_uri"):
        sync_client.import_set(big, display_name="x", gcs_destination="gs://b/p/")


def test_a_bad_line_fails_the_operation_and_keeps_nothing(
    sync_client: Client, project: str
) -> None:
    items = [*_items(2), {"displayName": "no payload", "evaluationItemType": "REQUEST"}]
    future = sync_client.import_set(
        items, display_name="bad", gcs_destination=_destination(project)
    )
    assert future.done
    with pytest.raises(errors.InvalidArgument, match="line 3: an EvaluationItem needs a payload"):
        future.wait()
    assert list(sync_client.list_items()) == []
    assert list(sync_client.list_sets()) == []


def test_a_typo_in_an_item_is_refused_before_sending(sync_client: Client) -> None:
    with pytest.raises(ValueError, match="displayNme"):
        sync_client.import_set(
            [{"displayNme": "x", "evaluationItemType": "REQUEST"}],
            display_name="x",
            gcs_destination="gs://b/p/",
        )


def _raw_import(client: Client, body: dict[str, Any]) -> Any:
    path = f"{client.parent}/evaluationSets:import"
    return client._transport.request(ApiCall("POST", path, body=body))


def _inline(lines: list[dict[str, Any]], data_format: str = "JSONL") -> dict[str, Any]:
    content = b"\n".join(json.dumps(line).encode() for line in lines)
    return {
        "content": base64.b64encode(content).decode(),
        "importSchemaConfig": {"dataFormat": data_format},
    }


@pytest.mark.parametrize(
    ("body", "error", "message"),
    [
        (
            {
                "evaluationSet": {"displayName": "s"},
                "gcsDestination": {"outputUriPrefix": "gs://b/p"},
            },
            errors.InvalidArgument,
            "exactly one source is required, got none",
        ),
        (
            {"evaluationSet": {"displayName": "s"}, "inlineSource": _inline([request_item()])},
            errors.InvalidArgument,
            "gcsDestination.outputUriPrefix is required",
        ),
        (
            {
                "evaluationSet": {"displayName": "s"},
                "gcsDestination": {"outputUriPrefix": "gs://b/p"},
                "cloudTraceSource": {"traceIds": ["1"]},
            },
            MethodNotImplemented,
            "the emulator does not import from cloudTraceSource",
        ),
        (
            {
                "evaluationSet": {"displayName": "s"},
                "gcsDestination": {"outputUriPrefix": "gs://b/p"},
                "inlineSource": _inline([], "OTEL_JSON"),
            },
            MethodNotImplemented,
            "dataFormat 'OTEL_JSON': the emulator imports JSONL",
        ),
        (
            {
                "evaluationSet": {"displayName": "s"},
                "gcsDestination": {"outputUriPrefix": "gs://b/p"},
                "inlineSource": _inline([request_item()]),
                "gcsSource": {"gcsUri": "gs://b/x.jsonl"},
            },
            errors.InvalidArgument,
            "exactly one source is required, got ['inlineSource', 'gcsSource']",
        ),
        (
            {"evaluationSett": {}},
            errors.InvalidArgument,
            "evaluationSett",
        ),
    ],
)
def test_bad_import_requests_are_refused(
    sync_client: Client, body: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        _raw_import(sync_client, body)
    assert message in str(caught.value)


def test_a_retried_import_answers_with_the_first_operation(
    emulator: Emulator, project: str
) -> None:
    body = {
        "evaluationSet": {"displayName": "once"},
        "gcsDestination": {"outputUriPrefix": _destination(project)},
        "inlineSource": _inline(_items(2)),
    }
    url = f"{emulator.url}/v1beta1/projects/{project}/locations/us-central1/evaluationSets:import"
    headers = {"x-platform-eval-request-id": "import-1"}
    first = httpx.post(url, json=body, headers=headers).json()
    second = httpx.post(url, json=body, headers=headers).json()
    assert first == second
    with emulator.client(project) as client:
        assert [s.name for s in client.list_sets()] == [first["response"]["name"]]
        assert len(list(client.list_items())) == 2
