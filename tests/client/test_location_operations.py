"""``projects.locations.operations`` (get, list, delete, cancel, wait), in both API versions:
the documented way to poll a delete, by the operation's id under its location."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from factories import request_item

from platform_eval import errors
from platform_eval.emulator import Emulator


def _deleted(client: Any) -> tuple[str, str]:
    """An item deleted: (the operation's own name, its name under the location)."""
    item = client.create_item(request_item("x"))
    operation = client.delete_item(item).operation
    op_id = operation.name.rsplit("/", 1)[-1]
    return operation.name, f"{client.parent}/operations/{op_id}"


@pytest.mark.parametrize("version", ["v1beta1", "v1"])
def test_an_operation_is_reached_under_its_location_in_both_versions(
    sync_client: Any, emulator: Emulator, version: str
) -> None:
    own, located = _deleted(sync_client)
    base = f"{emulator.url}/{version}/{located}"
    got = httpx.get(base).json()
    assert got["name"] == own and got["done"] is True
    assert httpx.post(f"{base}:wait", json={}).json()["name"] == own
    assert httpx.post(f"{base}:cancel", json={}).status_code == 200
    listed = httpx.get(f"{emulator.url}/{version}/{sync_client.parent}/operations").json()
    assert own in [op["name"] for op in listed["operations"]]
    assert httpx.delete(base).status_code == 200
    assert httpx.get(base).status_code == 404


def test_our_client_takes_location_operation_names(sync_client: Any) -> None:
    own, located = _deleted(sync_client)
    assert sync_client.get_operation(located).name == own
    assert sync_client.wait_operation(located).done
    names = [op.name for op in sync_client.list_operations(sync_client.parent, page_size=1)]
    assert own in names
    sync_client.delete_operation(located)
    with pytest.raises(errors.NotFound):
        sync_client.get_operation(located)


def test_location_operations_page_and_refuse_a_foreign_token(
    sync_client: Any, emulator: Emulator
) -> None:
    for _ in range(3):
        _deleted(sync_client)
    url = f"{emulator.url}/v1beta1/{sync_client.parent}/operations"
    seen: list[str] = []
    token = None
    while True:
        page = httpx.get(
            url, params={"pageSize": 2, **({"pageToken": token} if token else {})}
        ).json()
        seen += [op["name"] for op in page["operations"]]
        token = page.get("nextPageToken")
        if not token:
            break
    assert len(seen) == len(set(seen)) >= 3
    assert httpx.get(url, params={"pageToken": "bm90LW1pbmU="}).status_code == 400
