"""Payloads kept in Cloud Storage (``gcsUri``) are read as bytes, never as the object's metadata."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from platform_eval import Client
from platform_eval.emulator import Emulator

REQUEST = {"prompt": {"text": "What is 2 + 2?"}, "goldenResponse": {"text": "4"}}


def _put_object(emulator: Emulator, bucket: str, name: str, payload: Any) -> None:
    response = httpx.post(
        f"{emulator.url}/upload/storage/v1/b/{bucket}/o",
        params={"uploadType": "media", "name": name},
        content=json.dumps(payload).encode(),
        headers={"content-type": "application/json"},
    )
    response.raise_for_status()


@pytest.mark.parametrize("path", ["/storage/v1", "/download/storage/v1"])
def test_emulator_storage_answers_metadata_without_alt_media(emulator: Emulator, path: str) -> None:
    _put_object(emulator, "bkt", "dir/request.json", REQUEST)
    url = f"{emulator.url}{path}/b/bkt/o/dir%2Frequest.json"
    metadata = httpx.get(url).json()
    assert metadata["kind"] == "storage#object"
    assert metadata["name"] == "dir/request.json"
    assert httpx.get(url, params={"alt": "media"}).json() == REQUEST


def test_get_item_reads_the_payload_from_storage(client: Any, emulator: Emulator) -> None:
    _put_object(emulator, "payloads", "items/one.json", REQUEST)
    created = client.create_item(
        {
            "displayName": "kept in storage",
            "evaluationItemType": "REQUEST",
            "gcsUri": "gs://payloads/items/one.json",
        }
    )
    item = client.get_item(created.name)
    assert item.evaluation_request is not None
    assert item.evaluation_request.prompt.text == "What is 2 + 2?"
    assert item.evaluation_request.golden_response.text == "4"
    assert client.get_item(created.name, read_payload=False).evaluation_request is None


class StrictStorage:
    """Answers as Cloud Storage does: an object's metadata, unless the query asks alt=media."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if "/storage/v1/b/" in request.url.path:
            if request.url.params.get("alt") == "media":
                return httpx.Response(200, json=REQUEST)
            return httpx.Response(200, json={"kind": "storage#object", "name": "one.json"})
        item = {
            "name": "projects/p/locations/us-central1/evaluationItems/1",
            "evaluationItemType": "REQUEST",
            "gcsUri": "gs://payloads/one.json",
        }
        return httpx.Response(200, json=item)


def test_payload_reads_ask_for_media_against_strict_storage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PLATFORM_EVAL_EMULATOR_HOST", raising=False)
    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    storage = StrictStorage()
    http = httpx.Client(transport=httpx.MockTransport(storage))
    with Client(
        "p", "us-central1", credentials=_anonymous(), http_client=http, max_retries=0
    ) as client:
        item = client.get_item("1")
    assert item.evaluation_request is not None
    assert item.evaluation_request.prompt.text == "What is 2 + 2?"
    download = storage.requests[-1]
    assert download.url.host == "storage.googleapis.com"
    assert download.url.params.get("alt") == "media"


def _anonymous() -> Any:
    from google.auth.credentials import AnonymousCredentials

    return AnonymousCredentials()
