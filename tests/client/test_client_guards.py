"""The client guards its token, its inputs and its caller's time."""

from __future__ import annotations

import math
from collections.abc import Iterator

import httpx
import pytest
from conftest import FAST_RETRY
from factories import request_item
from google.oauth2.credentials import Credentials

from platform_eval import Client, RetryPolicy, errors
from platform_eval.emulator import Emulator

TOKEN = "ya29.guarded-token"
ITEM = {
    "name": "projects/p/locations/us-central1/evaluationItems/1",
    "evaluationItemType": "REQUEST",
}


class _Recorder:
    """An httpx transport that records what would have gone on the wire."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if "storage" in request.url.path or request.url.params.get("alt") == "media":
            return httpx.Response(200, json={"prompt": {"text": "from storage"}})
        return httpx.Response(200, json=ITEM)


def _client(recorder: _Recorder, **kwargs: object) -> Client:
    return Client(
        credentials=Credentials(token=TOKEN),  # type: ignore[no-untyped-call]
        retry=FAST_RETRY,
        http_client=httpx.Client(transport=httpx.MockTransport(recorder)),
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture
def no_emulator_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("PLATFORM_EVAL_EMULATOR_HOST", "STORAGE_EMULATOR_HOST", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.mark.usefixtures("no_emulator_env")
@pytest.mark.parametrize(
    "endpoint",
    ["http://evals.example.com", "http://10.1.2.3:8080", "http://[2001:db8::1]:80"],
)
def test_the_token_never_goes_in_clear_text_off_the_machine(endpoint: str) -> None:
    recorder = _Recorder()
    client = _client(recorder, project="p", api_endpoint=endpoint)
    with client, pytest.raises(errors.ConfigurationError, match="clear text"):
        client.get_item("1")
    assert recorder.requests == []


@pytest.mark.usefixtures("no_emulator_env")
@pytest.mark.parametrize(
    "endpoint", ["https://evals.example.com", "http://127.0.0.1:9", "http://localhost:9"]
)
def test_the_token_goes_over_https_and_to_loopback(endpoint: str) -> None:
    recorder = _Recorder()
    with _client(recorder, project="p", api_endpoint=endpoint) as client:
        client.get_item("1")
    assert recorder.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


def test_an_emulator_the_user_named_may_receive_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLATFORM_EVAL_EMULATOR_HOST", "emulator.internal:8765")
    recorder = _Recorder()
    with _client(recorder, project="p") as client:
        client.get_item("1")
    assert str(recorder.requests[0].url).startswith("http://emulator.internal:8765/")
    assert recorder.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


@pytest.mark.usefixtures("no_emulator_env")
def test_a_storage_emulator_gets_no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", "http://storage.internal:4443")
    recorder = _Recorder()
    with _client(recorder, project="p", api_endpoint="https://evals.example.com") as client:
        client._transport.request(client._ops.read_object("gs://bucket/payload.json").call)
    (request,) = recorder.requests
    assert request.url.host == "storage.internal"
    assert "authorization" not in request.headers


@pytest.mark.usefixtures("no_emulator_env")
@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"project": "p", "location": "evil.example.com:80/x#"}, "location"),
        ({"project": "p", "location": "us-central1/../x"}, "location"),
        ({"project": "p/locations/x", "location": "us-central1"}, "project"),
        ({"project": "p?alt=media", "location": "us-central1"}, "project"),
        ({"project": "P", "location": "us-central1"}, "project"),
    ],
)
def test_project_and_location_are_validated_before_any_request(
    kwargs: dict[str, str], field: str
) -> None:
    recorder = _Recorder()
    with pytest.raises(errors.ConfigurationError, match=field):
        _client(recorder, **kwargs)
    assert recorder.requests == []


@pytest.mark.usefixtures("no_emulator_env")
def test_domain_scoped_projects_and_numbers_are_valid() -> None:
    for project in ("example.com:my-project", "123456789012", "my-project-1"):
        _client(_Recorder(), project=project, location="europe-west4").close()


def test_timeout_is_a_deadline_for_the_whole_call(emulator: Emulator, project: str) -> None:
    # Without the deadline: 4 attempts of up to 1 s each plus up to 2 s of backoff.
    patient = RetryPolicy(max_retries=3, initial_backoff=0.5, max_backoff=1.0)
    with emulator.client(project, timeout=1.0, retry=patient) as client:
        emulator.inject_fault(path="evaluationItems", method="GET", delay=0.4, status=503, times=4)
        with pytest.raises((errors.ServiceUnavailable, errors.APITimeoutError)):
            list(client.list_items())
        # The deadline stopped the retries: at most two of the four attempts fit in 1 s.
        (left,) = emulator.pending_faults()
        assert left["times"] >= 2


def test_a_retry_after_beyond_the_deadline_fails_fast_and_says_why(
    emulator: Emulator, project: str
) -> None:
    # A deadline no busy machine's first request comes near, and a wait far beyond it.
    with emulator.client(project, timeout=20.0) as client:
        emulator.inject_fault(
            path="evaluationItems", method="GET", status=503, retry_after="50", times=2
        )
        with pytest.raises(errors.ServiceUnavailable, match="would pass the call's 20 s timeout"):
            list(client.list_items())
        # No second try was waited for: the second fault is still there.
        (left,) = emulator.pending_faults()
        assert left["times"] == 1


@pytest.mark.parametrize("timeout", [0, -1, math.inf, math.nan])
def test_a_timeout_that_is_not_a_positive_number_is_refused(timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        Client("p", api_endpoint="http://127.0.0.1:1", timeout=timeout)


@pytest.mark.parametrize(
    "policy",
    [
        {"initial_backoff": 0},
        {"initial_backoff": -1},
        {"max_backoff": 0.1, "initial_backoff": 1},
        {"multiplier": 0.5},
        {"max_retries": -1},
        {"max_retry_after": -1},
    ],
)
def test_retry_policies_that_remove_backoff_are_refused(policy: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**policy)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_refused_before_sending(sync_client: Client, value: float) -> None:
    with pytest.raises(errors.InvalidRequestError, match=r"body\.metadata\.run\.score"):
        sync_client.create_set(
            {"displayName": "s", "metadata": {"run": {"score": value}}, "evaluationItems": ["x"]}
        )
    assert list(sync_client.list_sets()) == []


def test_text_that_says_nan_is_sent_as_it_is(sync_client: Client) -> None:
    # Bodies are written by pydantic-core and scanned for a bare NaN; text naming one is fine.
    metadata = {"note": "NaN and Infinity are words here", "NaN": "-Infinity"}
    item = sync_client.create_item(request_item("x"))
    created = sync_client.create_set(
        {"displayName": "NaN", "metadata": metadata, "evaluationItems": [item.name]}
    )
    assert sync_client.get_set(created).metadata == metadata


def test_an_import_with_nan_is_refused_before_sending() -> None:
    from platform_eval._operations import jsonl

    item = {
        "evaluationItemType": "REQUEST",
        "evaluationRequest": {"prompt": {"value": {"x": math.nan}}},
    }
    with pytest.raises(errors.InvalidRequestError, match=r"body\.evaluationRequest\.prompt"):
        jsonl([item])


def test_nan_in_a_typed_field_is_refused_with_its_name() -> None:
    from platform_eval.types import CandidateResult

    with pytest.raises(ValueError, match="score"):
        CandidateResult.model_validate({"score": math.nan})
