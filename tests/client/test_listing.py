from __future__ import annotations

import re
import time
from datetime import timedelta, timezone
from typing import Any

import pytest
from factories import request_item

from platform_eval import AsyncClient, Client, errors
from platform_eval.emulator import Emulator


def _seed(client: Any, count: int) -> list[str]:
    names = []
    for index in range(count):
        labels = {"parity": "even" if index % 2 == 0 else "odd", "team": "core"}
        names.append(client.create_item(request_item(f"item-{index}", labels=labels)).name)
    return names


def test_paging_over_several_pages_returns_everything_once_in_order(client: Any) -> None:
    names = _seed(client, 7)
    listed = [i.name for i in client.list_items(page_size=3)]
    assert listed == names


def test_iter_pages_exposes_page_boundaries(sync_client: Client) -> None:
    _seed(sync_client, 5)
    pages = list(sync_client.list_items(page_size=2).iter_pages())
    assert [len(p.items) for p in pages] == [2, 2, 1]
    assert [p.has_next_page for p in pages] == [True, True, False]


@pytest.mark.anyio
async def test_async_pager_async_for(emulator: Emulator, project: str) -> None:
    async with emulator.async_client(project) as client:
        for index in range(3):
            await client.create_item(request_item(f"a{index}"))
        seen = [item.display_name async for item in client.list_items(page_size=2)]
        pages = [page async for page in client.list_items(page_size=2).iter_pages()]
    assert seen == ["a0", "a1", "a2"]
    assert len(pages) == 2


def test_filters(client: Any) -> None:
    _seed(client, 4)
    assert [i.display_name for i in client.list_items(filter='display_name = "item-2"')] == [
        "item-2"
    ]
    assert [i.display_name for i in client.list_items(filter='displayName="item-3"')] == ["item-3"]
    evens = client.list_items(filter='labels.parity = "even"', page_size=1)
    assert [i.display_name for i in evens] == ["item-0", "item-2"]
    both = client.list_items(filter='labels.parity = "odd" AND labels.team = "core"')
    assert [i.display_name for i in both] == ["item-1", "item-3"]
    assert len(list(client.list_items(filter="evaluation_item_type = REQUEST"))) == 4
    assert list(client.list_items(filter="evaluation_item_type = RESULT")) == []
    assert len(list(client.list_items(filter='display_name != "item-0"'))) == 3


def test_bad_filter_is_invalid_argument(client: Any) -> None:
    for bad, says in (
        ("display_name =", "filter"),
        ('(display_name = "a"', "expected `)`"),
        ('display_name ~ "a"', "cannot parse filter"),
        ('display_name "a"', "expected a comparator"),
        ('display_name = "a" )', "unexpected ')'"),
        ("AND display_name = 1", "expected a field name"),
    ):
        with pytest.raises(errors.InvalidArgument, match=re.escape(says)):
            list(client.list_items(filter=bad))


def test_filters_as_aip_160_writes_them(client: Any) -> None:
    for index in range(4):
        labels = {"parity": "even" if index % 2 == 0 else "odd"}
        client.create_item(request_item(f"item-{index}", labels=labels))
        time.sleep(0.003)  # distinct creation times, to compare
    names = sorted(i.display_name for i in client.list_items())

    def listed(text: str) -> list[str]:
        return sorted(i.display_name for i in client.list_items(filter=text))

    assert listed('display_name = "item-0" OR display_name = "item-3"') == ["item-0", "item-3"]
    assert listed('NOT display_name = "item-0"') == names[1:]
    assert listed('-display_name = "item-0"') == names[1:]
    assert listed(
        '(display_name = "item-0" OR display_name = "item-1") AND labels.parity = "odd"'
    ) == ["item-1"]
    # OR binds tighter than AND, as AIP-160 says; terms side by side are ANDed.
    assert listed('labels.parity = "odd" display_name = "item-1" OR display_name = "item-0"') == [
        "item-1"
    ]
    assert listed('display_name >= "item-2"') == ["item-2", "item-3"]
    assert listed('display_name < "item-1"') == ["item-0"]
    created = sorted(client.list_items(), key=lambda i: i.create_time)
    middle = created[1].create_time.isoformat()
    after = listed(f'create_time > "{middle}"')
    assert after == sorted(i.display_name for i in created[2:])
    # The same instant in another offset is the same instant.
    shifted = created[1].create_time.astimezone(timezone(timedelta(hours=5))).isoformat()
    assert listed(f'create_time > "{shifted}"') == after
    assert listed(f'create_time <= "{middle}"') == sorted(i.display_name for i in created[:2])


def test_a_filter_on_a_field_the_resource_lacks_is_refused(client: Any) -> None:
    # AIP-160: an error naming the field, not an empty list that looks like "nothing matched".
    with pytest.raises(errors.InvalidArgument, match="unknown field 'dispaly_name'"):
        list(client.list_items(filter='dispaly_name = "a"'))
    with pytest.raises(errors.InvalidArgument, match="unknown field 'state'"):
        list(client.list_sets(filter="state = SUCCEEDED"))
    # Nested fields and map keys are under a known field; the run a result belongs to is too.
    assert list(client.list_items(filter='evaluation_request.prompt.text = "x"')) == []
    assert list(client.list_items(filter='labels.anything = "x"')) == []
    assert list(client.list_items(filter='evaluation_run = "x"')) == []


def test_projects_and_locations_are_isolated(emulator: Emulator, project: str) -> None:
    with (
        emulator.client(project, "us-central1") as here,
        emulator.client(project, "europe-west4") as there,
        emulator.client(project + "-other", "us-central1") as other,
    ):
        item = here.create_item(request_item("mine"))
        assert list(there.list_items()) == []
        assert list(other.list_items()) == []
        with pytest.raises(errors.NotFound):
            other.get_item(item.id)


def test_page_token_is_bound_to_its_filter(emulator: Emulator, project: str) -> None:
    import httpx

    with emulator.client(project) as client:
        _seed(client, 3)
        base = f"{emulator.url}/v1beta1/{client.parent}/evaluationItems"
    first = httpx.get(base, params={"pageSize": 1}).json()
    token = first["nextPageToken"]
    assert httpx.get(base, params={"pageSize": 1, "pageToken": token}).status_code == 200
    changed = httpx.get(
        base, params={"pageSize": 1, "pageToken": token, "filter": 'labels.team = "core"'}
    )
    assert changed.status_code == 400
    assert changed.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_list_runs_and_sets_are_typed(client: Any) -> None:
    assert list(client.list_runs()) == []
    created = client.create_set(display_name="s", items=[client.create_item(request_item("x"))])
    assert [s.display_name for s in client.list_sets(filter='display_name = "s"')] == ["s"]
    assert created.id


def test_both_clients_expose_the_same_methods() -> None:
    public = lambda cls: {n for n in dir(cls) if not n.startswith("_")}  # noqa: E731
    assert public(Client) == public(AsyncClient) | {"to_async"}  # what a sync client becomes


def test_has_on_the_run_of_a_result_is_equality_not_a_500(sync_client: Any) -> None:
    # `evaluation_run : "x"` used to answer 500 (IndexError): the run is read from two places.
    assert list(sync_client.list_items(filter='evaluation_run : "no-such-run"')) == []
    items = [sync_client.create_item(request_item(f"i{i}")) for i in range(2)]
    evaluation_set = sync_client.create_set(display_name="s", items=items)
    run = sync_client.wait_for_run(
        sync_client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"]),
        timeout=30,
        poll_interval=0.02,
    )
    found = list(sync_client.list_items(filter=f'evaluation_run : "{run.name}"'))
    assert len(found) == 2


@pytest.mark.parametrize(
    ("hostile", "said"),
    [
        ("(" * 300 + 'displayName = "a"' + ")" * 300, "parentheses more than 32 deep"),
        (" AND ".join(['displayName = "a"'] * 1000), "more than 200 comparisons"),
    ],
)
def test_a_hostile_filter_is_a_400_never_a_500_or_a_retried_503(
    sync_client: Client, hostile: str, said: str
) -> None:
    with pytest.raises(errors.InvalidArgument, match=said):
        list(sync_client.list_items(filter=hostile))
    # Within the bounds, the same shapes are answered.
    assert list(sync_client.list_items(filter="(" * 30 + 'displayName = "a"' + ")" * 30)) == []
    assert list(sync_client.list_items(filter=" AND ".join(['displayName = "a"'] * 200))) == []
