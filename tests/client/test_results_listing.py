"""Results are read by listing the run's items a page at a time, with the result set as the
authority: nothing missed, nothing read twice, one round trip per page of hundreds."""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from conftest import FAST_RETRY
from factories import request_item

from platform_eval import Client, errors
from platform_eval import types as t
from platform_eval._operations import ITEMS_PAGE_SIZE, RESULTS_PAGE_SIZE
from platform_eval._pagination import MAX_EMPTY_PAGES
from platform_eval.emulator import Emulator


def _bucket(project: str) -> str:
    # The emulator's storage gives each project its own buckets, as Cloud Storage would.
    return f"gs://{project}-listing/imports/"


def _run_of(client: Any, count: int) -> t.EvaluationRun:
    items = [
        request_item(
            f"q{i}", golden={"text": f"a{i}"}, candidates=[{"candidate": "c", "text": "a"}]
        )
        for i in range(count)
    ]
    created = client.import_set(
        items=items, display_name="golden", gcs_destination=_bucket(client.project), wait=True
    ).result()
    run = client.create_run(evaluation_set=created, metrics=["exact_match"], display_name="r")
    return client.wait_for_run(run, timeout=60, poll_interval=0.05)


def _counting_client(emulator: Emulator, project: str) -> tuple[Client, Counter[str]]:
    calls: Counter[str] = Counter()

    def count(request: httpx.Request) -> None:
        path = request.url.path
        kind = "list" if path.endswith("/evaluationItems") else path.rsplit("/", 2)[-2]
        calls[f"{request.method} {kind}"] += 1

    http = httpx.Client(event_hooks={"request": [count]}, timeout=30)
    return emulator.client(project, retry=FAST_RETRY, http_client=http), calls


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_results_of_a_large_run_come_a_page_per_round_trip(
    emulator: Emulator, project: str
) -> None:
    client, calls = _counting_client(emulator, project)
    with client:
        run = _run_of(client, 2_345)
        calls.clear()
        results = client.get_results(run)
    # The result set once, then pages of a thousand (get_results keeps every item: whole
    # pages); no item read on its own.
    assert calls == {"GET evaluationSets": 1, "GET list": math.ceil(2_345 / ITEMS_PAGE_SIZE)}
    result_set = client.get_set(run.evaluation_results.evaluation_set)  # type: ignore[union-attr]
    assert [r.name for r in results] == result_set.evaluation_items
    assert all(r.evaluation_item_type is t.EvaluationItemType.RESULT for r in results)
    assert {r.evaluation_response.evaluation_request for r in results} == set(  # type: ignore[union-attr]
        item.name for item in client.list_items(filter="evaluation_item_type = REQUEST")
    )


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_iter_results_is_lazy_and_can_be_abandoned(emulator: Emulator, project: str) -> None:
    client, calls = _counting_client(emulator, project)
    with client:
        run = _run_of(client, 1_500)
        calls.clear()
        results = client.iter_results(run)
        first = next(results)
        assert first.evaluation_item_type is t.EvaluationItemType.RESULT
        # The first page is read and the second already requested; nothing more.
        assert 2 * RESULTS_PAGE_SIZE < 1_500
        assert calls["GET list"] <= 2
        results.close()
        everything = list(client.iter_results(run))
    assert len(everything) == 1_500
    assert len({r.name for r in everything}) == 1_500


def test_a_server_that_cannot_filter_by_run_gets_one_read_per_item(
    emulator: Emulator, client: Any
) -> None:
    run = _run_of(client, 30)
    expected = [r.name for r in client.get_results(run)]
    emulator.inject_fault(path="/evaluationItems", method="GET", status=400, times=1)
    assert [r.name for r in client.get_results(run)] == expected
    assert emulator.pending_faults() == []


def test_an_item_the_result_set_names_but_the_listing_misses_is_read_by_name(
    client: Any,
) -> None:
    first = _run_of(client, 4)
    second = _run_of(client, 3)
    stray = client.get_results(first)[0]
    # The result set is the authority: an item of another run it names is read all the same.
    result_set = client.get_set(second.evaluation_results.evaluation_set)
    names = [*result_set.evaluation_items, stray.name]
    client.update_set(result_set.model_copy(update={"evaluation_items": names}))
    results = client.get_results(second)
    assert [r.name for r in results] == names
    assert len(set(names)) == 4


def test_async_iter_results_yields_every_item_once(emulator: Emulator, project: str) -> None:
    async def main() -> list[str]:
        async with emulator.async_client(project, retry=FAST_RETRY) as client:
            items = [
                request_item(
                    f"q{i}", golden={"text": "a"}, candidates=[{"candidate": "a", "text": "a"}]
                )
                for i in range(1_200)
            ]
            created = await client.import_set(
                items=items, display_name="g", gcs_destination=_bucket(project), wait=True
            )
            run = await client.create_run(
                evaluation_set=await created.result(), metrics=["exact_match"]
            )
            run = await client.wait_for_run(run, timeout=60, poll_interval=0.05)
            names = [item.name async for item in client.iter_results(run)]
            listed = await client.get_results(run)
            assert sorted(names) == sorted(r.name for r in listed)
            return names

    names = asyncio.run(main())
    assert len(names) == len(set(names)) == 1_200


# -- a server whose listing misbehaves (no emulator answers so: the answers are rewritten) -------

Rewrite = Callable[[int, dict[str, Any]], dict[str, Any]]


def _listing_request(request: httpx.Request) -> bool:
    return request.method == "GET" and request.url.path.endswith("/evaluationItems")


def _first_page_of_ten(request: httpx.Request) -> httpx.Request:
    """The same request for the listing's first page, ten items long, whatever token it has."""
    params = {k: v for k, v in request.url.params.items() if k != "pageToken"}
    params["pageSize"] = "10"
    return httpx.Request("GET", request.url.copy_with(params=params), headers=request.headers)


def _rewritten(answer: httpx.Response, page: int, rewrite: Rewrite) -> httpx.Response:
    return httpx.Response(200, json=rewrite(page, json.loads(answer.content)))


class _Rewriting(httpx.HTTPTransport):
    def __init__(self, rewrite: Rewrite) -> None:
        super().__init__()
        self.rewrite, self.pages = rewrite, 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not _listing_request(request):
            return super().handle_request(request)
        answer = super().handle_request(_first_page_of_ten(request))
        answer.read()
        self.pages += 1
        return _rewritten(answer, self.pages, self.rewrite)


class _AsyncRewriting(httpx.AsyncHTTPTransport):
    def __init__(self, rewrite: Rewrite) -> None:
        super().__init__()
        self.rewrite, self.pages = rewrite, 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not _listing_request(request):
            return await super().handle_async_request(request)
        answer = await super().handle_async_request(_first_page_of_ten(request))
        await answer.aread()
        self.pages += 1
        return _rewritten(answer, self.pages, self.rewrite)


def _pull_through(
    emulator: Emulator, project: str, kind: str, rewrite: Rewrite
) -> tuple[Callable[[], list[t.EvaluationItem]], Any]:
    """A 30-item run's results pulled through a listing ``rewrite`` changes; the transport."""
    with emulator.client(project, retry=FAST_RETRY) as setup:
        run = _run_of(setup, 30)
    if kind == "sync":
        transport: Any = _Rewriting(rewrite)
        client: Any = emulator.client(
            project, retry=FAST_RETRY, http_client=httpx.Client(transport=transport)
        )
        return lambda: list(client.iter_results(run)), transport

    transport = _AsyncRewriting(rewrite)

    async def pull() -> list[t.EvaluationItem]:
        http = httpx.AsyncClient(transport=transport)
        async with emulator.async_client(project, retry=FAST_RETRY, http_client=http) as client:
            return [item async for item in client.iter_results(run)]

    return lambda: asyncio.run(pull()), transport


def _new_token(page: int, body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "nextPageToken": f"token-{page}"}


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_pull_whose_pages_bring_nothing_new_stops(
    emulator: Emulator, project: str, kind: str
) -> None:
    # The first page again and again, each time under a token never given before.
    pull, transport = _pull_through(emulator, project, kind, _new_token)
    with pytest.raises(errors.RepeatedPageTokenError, match="pages in a row with no result"):
        pull()
    assert MAX_EMPTY_PAGES < transport.pages <= MAX_EMPTY_PAGES + 2


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_pull_given_a_page_token_twice_stops(emulator: Emulator, project: str, kind: str) -> None:
    pull, transport = _pull_through(
        emulator, project, kind, lambda _, body: {**body, "nextPageToken": "again"}
    )
    with pytest.raises(errors.RepeatedPageTokenError, match="'again' a second time"):
        pull()
    assert transport.pages == 2


def _seventh_item_misfits(page: int, body: dict[str, Any]) -> dict[str, Any]:
    items = body["evaluationItems"]
    items[6] = {**items[6], "evaluationItemType": {"not": "an enum"}}
    return {"evaluationItems": items}


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_an_item_that_does_not_fit_the_schema_names_the_call_and_field(
    emulator: Emulator, project: str, kind: str
) -> None:
    # Items are built as they are read, after the page's answer was taken: a misfit among
    # them is still the typed error naming the call, not pydantic's.
    pull, _ = _pull_through(emulator, project, kind, _seventh_item_misfits)
    with pytest.raises(errors.InvalidResponseError) as raised:
        pull()
    message = str(raised.value)
    assert "GET" in message and "evaluationItems" in message
    assert "evaluationItemType" in message or "evaluation_item_type" in message
