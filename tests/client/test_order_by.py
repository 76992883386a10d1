"""AIP-132 ``orderBy`` on every list: fields of the resource, ``desc``, several terms, pages."""

from __future__ import annotations

from typing import Any

import pytest
from factories import request_item
from google.api_core import exceptions as core

from platform_eval import types as t
from platform_eval._names import ITEMS


def _items(client: Any, names: list[str]) -> None:
    for index, name in enumerate(names):
        client.create_item(request_item(name, labels={"rank": str(index % 2)}))


def test_items_come_in_the_order_asked_across_pages(client: Any) -> None:
    _items(client, ["cherry", "apple", "banana", "apple", "date"])
    ascending = [i.display_name for i in client.list_items(order_by="display_name", page_size=2)]
    assert ascending == ["apple", "apple", "banana", "cherry", "date"]
    descending = client.list_items(order_by="displayName desc", page_size=2)
    assert [i.display_name for i in descending] == ["date", "cherry", "banana", "apple", "apple"]


def test_ties_keep_creation_order_and_later_terms_break_them(client: Any) -> None:
    _items(client, ["b", "a", "b", "a"])
    created = [i.name for i in client.list_items()]
    by_rank = [i.name for i in client.list_items(order_by="labels.rank")]
    # rank 0: items 0 and 2; rank 1: items 1 and 3; creation order within each.
    assert by_rank == [created[0], created[2], created[1], created[3]]
    two_terms = client.list_items(order_by="labels.rank desc, display_name")
    assert [i.display_name for i in two_terms] == ["a", "a", "b", "b"]


def test_sets_and_runs_are_ordered_too(client: Any) -> None:
    item = client.create_item(request_item("x"))
    for name in ("zeta", "alpha", "mid"):
        client.create_set(display_name=name, items=[item])
    ordered = client.list_sets(order_by="display_name desc")
    assert [s.display_name for s in ordered] == ["zeta", "mid", "alpha"]


@pytest.mark.parametrize("order_by", ["no_such_field", "display_name sideways", "display_name,"])
def test_a_bad_order_by_is_invalid_argument_naming_it(client: Any, order_by: str) -> None:
    with pytest.raises(core.InvalidArgument, match="invalid orderBy"):
        list(client.list_items(order_by=order_by))


def test_a_page_token_is_bound_to_its_order(sync_client: Any) -> None:
    _items(sync_client, ["a", "b", "c"])
    first = next(iter(sync_client.list_items(order_by="display_name", page_size=1).iter_pages()))
    assert first.next_page_token
    with pytest.raises(core.InvalidArgument, match="pageToken"):
        sync_client._run(
            sync_client._ops.list_page(
                ITEMS,
                t.EvaluationItem,
                filter=None,
                page_size=1,
                page_token=first.next_page_token,
                order_by="display_name desc",
            )
        )
