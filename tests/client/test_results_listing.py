"""Results are read by listing the run's items a page at a time, with the result set as the
authority: nothing missed, nothing read twice, one round trip per page of hundreds."""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from typing import Any

import httpx
import pytest
from conftest import FAST_RETRY
from factories import request_item

from platform_eval import Client
from platform_eval import types as t
from platform_eval._operations import RESULTS_PAGE_SIZE
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
def test_results_of_a_large_run_come_a_thousand_per_round_trip(
    emulator: Emulator, project: str
) -> None:
    client, calls = _counting_client(emulator, project)
    with client:
        run = _run_of(client, 2_345)
        calls.clear()
        results = client.get_results(run)
    # The result set once, then pages of RESULTS_PAGE_SIZE; no item read on its own.
    assert calls == {"GET evaluationSets": 1, "GET list": math.ceil(2_345 / RESULTS_PAGE_SIZE)}
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
