"""Who may use the emulator: loopback by default, a token beyond it, buckets kept per project."""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
import pytest
from conftest import cli_emulator
from factories import request_item

from platform_eval import Client
from platform_eval.emulator import Emulator
from platform_eval.emulator.access import exposure_warning

TOKEN = "emulator-secret-1"
ROUTES = [
    ("GET", "/v1beta1/projects/p/locations/us-central1/evaluationSets"),
    ("GET", "/_emulator/health"),
    ("POST", "/_emulator/reset"),
    ("GET", "/_emulator/faults"),
    ("GET", "/storage/v1/b/bucket"),
    ("GET", "/download/storage/v1/b/bucket/o/x?alt=media"),
]


@pytest.fixture(scope="module")
def guarded() -> Any:
    with Emulator(auth_token=TOKEN) as emu:
        yield emu


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x"]
)
def test_every_route_wants_the_token(
    guarded: Emulator, method: str, path: str, authorization: str | None
) -> None:
    headers = {"authorization": authorization} if authorization else {}
    response = httpx.request(method, guarded.url + path, headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["status"] == "UNAUTHENTICATED"


def test_a_401_carries_a_challenge_httplib2_reads_and_google_rpc_details(guarded: Emulator) -> None:
    from httplib2 import auth

    response = httpx.get(guarded.url + "/v1beta1/projects/p/locations/l/evaluationItems")
    challenge = auth._parse_www_authenticate(dict(response.headers), "www-authenticate")
    assert challenge == {"bearer": {"realm": "platform-eval emulator", "error": "invalid_token"}}
    [detail] = response.json()["error"]["details"]
    assert detail["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert detail["reason"] == "CREDENTIALS_MISSING"


def test_the_token_opens_every_route(guarded: Emulator) -> None:
    headers = {"authorization": f"Bearer {TOKEN}"}
    for method, path in ROUTES:
        assert httpx.request(method, guarded.url + path, headers=headers).status_code != 401


def test_clients_send_the_token(guarded: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    with guarded.client("token-project") as client:
        created = client.get_item(client.create_item(request_item("x")))
    monkeypatch.setenv("PLATFORM_EVAL_EMULATOR_HOST", guarded.host_port)
    monkeypatch.setenv("PLATFORM_EVAL_EMULATOR_TOKEN", TOKEN)
    with Client("token-project") as client:
        assert client.get_item(created.id) == created


def test_binding_beyond_loopback_warns() -> None:
    assert exposure_warning("127.0.0.1", None) is None
    assert exposure_warning("::1", None) is None
    assert exposure_warning("localhost", None) is None
    open_warning = exposure_warning("0.0.0.0", None)
    assert open_warning and "--auth-token" in open_warning
    token_warning = exposure_warning("192.168.1.5", TOKEN)
    assert token_warning and "clear text" in token_warning


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_the_cli_warns_and_takes_the_token_from_the_environment() -> None:
    env = {**os.environ, "PLATFORM_EVAL_EMULATOR_TOKEN": TOKEN}
    with cli_emulator("--host", "0.0.0.0", env=env) as running:
        assert httpx.get(f"{running.url}/_emulator/health").status_code == 401
        authorized = {"authorization": f"Bearer {TOKEN}"}
        health = httpx.get(f"{running.url}/_emulator/health", headers=authorized)
        assert health.status_code == 200
    assert "warning: serving on 0.0.0.0" in running.err and "clear text" in running.err
    assert TOKEN not in running.out + running.err


def _put(emulator: Emulator, bucket: str, name: str, payload: Any, project: str) -> httpx.Response:
    return httpx.post(
        f"{emulator.url}/upload/storage/v1/b/{bucket}/o",
        params={"uploadType": "media", "name": name, "userProject": project},
        content=json.dumps(payload).encode(),
    )


def test_a_bucket_belongs_to_the_project_that_used_it_first(emulator: Emulator) -> None:
    payload = {
        "prompt": {"text": "q"},
        "goldenResponse": {"text": "a"},
        "candidateResponses": [{"candidate": "c", "text": "a"}],
    }
    assert _put(emulator, "owned-by-a", "req.json", payload, "project-a").status_code == 200
    refused = _put(emulator, "owned-by-a", "other.json", payload, "project-b")
    assert refused.status_code == 403
    read = httpx.get(
        f"{emulator.url}/storage/v1/b/owned-by-a/o/req.json",
        params={"alt": "media", "userProject": "project-b"},
    )
    assert read.status_code == 403

    # Project B's items cannot point a run at project A's objects; project A's can.
    refused_result = _evaluate_object(emulator, "project-b", "gs://owned-by-a/req.json")
    assert refused_result.error is not None
    assert "belongs to another project" in str(refused_result.error.message)
    assert _evaluate_object(emulator, "project-a", "gs://owned-by-a/req.json").error is None


def _evaluate_object(emulator: Emulator, project: str, uri: str) -> Any:
    """The one result of a run over one item whose payload is the object at ``uri``."""
    with emulator.client(project) as client:
        item = client.create_item(
            {"displayName": "b", "evaluationItemType": "REQUEST", "gcsUri": uri}
        )
        evaluation_set = client.create_set(display_name=project, items=[item])
        run = client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
        (result,) = client.get_results(client.wait_for_run(run, timeout=60, poll_interval=0.05))
    return result
