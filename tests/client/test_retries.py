"""Retry behaviour, with faults injected by the emulator over real HTTP."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from conftest import FAST_RETRY, free_port
from factories import request_item

from platform_eval import Client, RetryPolicy, errors
from platform_eval.emulator import Emulator


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_retryable_statuses_are_retried(client: Any, emulator: Emulator, status: int) -> None:
    item = client.get_item(client.create_item(request_item("x")))
    emulator.inject_fault(path="evaluationItems/", method="GET", status=status, times=2)
    assert client.get_item(item.name) == item
    assert emulator.pending_faults() == []


def test_gives_up_after_max_retries_with_the_mapped_error(client: Any, emulator: Emulator) -> None:
    item = client.create_item(request_item("x"))
    emulator.inject_fault(path="evaluationItems/", method="GET", status=503, times=10)
    with pytest.raises(errors.ServiceUnavailable, match="injected fault"):
        client.get_item(item.name)
    # One attempt plus FAST_RETRY.max_retries retries.
    assert emulator.pending_faults()[0]["times"] == 10 - (1 + FAST_RETRY.max_retries)


@pytest.mark.parametrize("status", [400, 408, 499, 504])
def test_non_retryable_status_is_not_retried(client: Any, emulator: Emulator, status: int) -> None:
    # 408 and 504 are DEADLINE_EXCEEDED: AIP-194 says a deadline must be honoured.
    emulator.inject_fault(path="evaluationItems", method="GET", status=status, times=2)
    with pytest.raises(errors.GoogleAPICallError) as caught:
        list(client.list_items())
    assert caught.value.code == status
    assert emulator.pending_faults()[0]["times"] == 1


def test_retry_after_is_honoured(emulator: Emulator, project: str) -> None:
    slow = RetryPolicy(max_retries=1, initial_backoff=0.001, max_backoff=0.001)
    with emulator.client(project, retry=slow) as client:
        emulator.inject_fault(path="evaluationItems", method="GET", status=429, retry_after="0.3")
        started = time.monotonic()
        assert list(client.list_items()) == []
        assert time.monotonic() - started >= 0.3


def test_dropped_connection_on_a_read_is_retried(client: Any, emulator: Emulator) -> None:
    item = client.get_item(client.create_item(request_item("x")))
    emulator.inject_fault(path=item.id, method="GET", kind="drop", times=2)
    assert client.get_item(item.id) == item
    assert emulator.pending_faults() == []


def test_create_whose_response_was_lost_is_not_duplicated(client: Any, emulator: Emulator) -> None:
    # The server stores the item, then the connection drops / a 503 replaces the answer: the
    # retry carries the same request id and gets the stored item back.
    emulator.inject_fault(path="evaluationItems", method="POST", kind="drop_after")
    emulator.inject_fault(path="evaluationItems", method="POST", kind="status_after", status=503)
    created = client.create_item(request_item("once"))
    assert emulator.pending_faults() == []
    assert [i.name for i in client.list_items()] == [created.name]


def test_lost_create_of_sets_and_runs_is_not_duplicated(client: Any, emulator: Emulator) -> None:
    item = client.create_item(
        request_item("x", golden={"text": "x"}, candidates=[{"candidate": "a", "text": "x"}])
    )
    emulator.inject_fault(path="evaluationSets", method="POST", kind="drop_after")
    evaluation_set = client.create_set(display_name="s", items=[item])
    emulator.inject_fault(path="evaluationRuns", method="POST", kind="status_after", status=500)
    run = client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
    assert [s.name for s in client.list_sets(filter='display_name = "s"')] == [evaluation_set.name]
    assert [r.name for r in client.list_runs()] == [run.name]


def test_connection_refused_is_an_api_connection_error() -> None:
    client = Client(api_endpoint=f"http://127.0.0.1:{free_port()}", retry=FAST_RETRY)
    with client, pytest.raises(errors.APIConnectionError, match="could not reach"):
        client.get_item("1")


def test_timeout_is_an_api_timeout_error(emulator: Emulator, project: str) -> None:
    with emulator.client(project, timeout=0.2, max_retries=0) as client:
        emulator.inject_fault(path="evaluationItems", method="GET", delay=1.0)
        with pytest.raises(errors.APITimeoutError):
            list(client.list_items())


class _Script:
    """An httpx transport that answers from a script: the only way to play a real service
    that does not deduplicate creates."""

    def __init__(self, *responses: httpx.Response | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.responses.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def _service_client(script: _Script) -> Client:
    from google.auth.credentials import AnonymousCredentials

    return Client(
        "p",
        "us-central1",
        credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
        retry=FAST_RETRY,
        http_client=httpx.Client(transport=httpx.MockTransport(script)),
    )


ITEM = {
    "name": "projects/p/locations/us-central1/evaluationItems/1",
    "evaluationItemType": "REQUEST",
}


def test_against_the_service_a_create_is_not_retried_after_it_may_have_been_processed() -> None:
    script = _Script(
        httpx.Response(
            503, json={"error": {"code": 503, "status": "UNAVAILABLE", "message": "busy"}}
        )
    )
    with _service_client(script) as client, pytest.raises(errors.ServiceUnavailable):
        client.create_item(request_item("x"))
    assert len(script.requests) == 1

    dropped = _Script(httpx.ReadError("connection reset"))
    with _service_client(dropped) as client, pytest.raises(errors.APIConnectionError):
        client.create_item(request_item("x"))
    assert len(dropped.requests) == 1


def test_against_the_service_a_create_is_retried_when_it_never_arrived() -> None:
    script = _Script(
        httpx.ConnectError("refused"),
        httpx.Response(
            429, json={"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota"}}
        ),
        httpx.Response(200, json=ITEM),
    )
    with _service_client(script) as client:
        assert client.create_item(request_item("x")).name == ITEM["name"]
    ids = {r.headers["x-platform-eval-request-id"] for r in script.requests}
    assert len(script.requests) == 3 and len(ids) == 1


def test_against_the_service_reads_are_retried_after_a_reset() -> None:
    script = _Script(httpx.ReadError("reset"), httpx.Response(200, json=ITEM))
    with _service_client(script) as client:
        assert client.get_item("1").name == ITEM["name"]
    assert len(script.requests) == 2
    assert str(script.requests[0].url) == (
        "https://us-central1-aiplatform.googleapis.com/v1beta1/"
        "projects/p/locations/us-central1/evaluationItems/1"
    )


def test_retried_delete_that_finds_nothing_succeeded() -> None:
    script = _Script(
        httpx.Response(503, json={"error": {"code": 503, "status": "UNAVAILABLE", "message": "x"}}),
        httpx.Response(
            404, json={"error": {"code": 404, "status": "NOT_FOUND", "message": "gone"}}
        ),
    )
    with _service_client(script) as client:
        client.delete_item("1")
    assert len(script.requests) == 2


def test_backoff_policy_numbers() -> None:
    policy = RetryPolicy()
    assert policy.max_retries == 3
    for attempt in range(10):
        ceiling = min(0.5 * 2**attempt, 8.0)
        assert ceiling / 10 <= policy.delay(attempt) <= ceiling
    assert policy.delay(0, "2") == 2.0
    assert policy.delay(0, "120") <= 0.5  # beyond 60 s: fall back to backoff
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=5), usegmt=True)
    assert 3.0 <= policy.delay(0, soon) <= 5.0
    assert policy.delay(0, "not a date") <= 0.5
    # Zero or negative Retry-After does not remove the backoff.
    assert all(policy.delay(0, value) >= 0.05 for value in ("0", "-3", "nan"))


@pytest.mark.anyio
async def test_async_client_applies_the_same_create_policy() -> None:
    from google.auth.credentials import AnonymousCredentials

    from platform_eval import AsyncClient

    calls: list[httpx.Request] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) == 1:
            raise httpx.ConnectError("refused")
        if len(calls) == 2:
            return httpx.Response(
                503, json={"error": {"code": 503, "status": "UNAVAILABLE", "message": "x"}}
            )
        return httpx.Response(200, json=ITEM)

    client = AsyncClient(
        "p",
        credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
        retry=FAST_RETRY,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )
    async with client:
        with pytest.raises(errors.ServiceUnavailable):
            await client.create_item(request_item("x"))
        assert len(calls) == 2  # the refused connect was retried, the 503 was not
        assert (await client.get_item("1")).name == ITEM["name"]
