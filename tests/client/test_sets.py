from __future__ import annotations

from typing import Any

import pytest
from factories import request_item

from platform_eval import errors
from platform_eval import types as t


def test_set_lifecycle(client: Any) -> None:
    a = client.create_item(request_item("a"))
    b = client.create_item(request_item("b"))
    created = client.create_set(display_name="golden", items=[a, b.id])
    assert created.evaluation_items == [a.name, b.name]
    assert created.display_name == "golden"
    # As the service's create answer: no createTime or updateTime; a GET has them.
    fetched = client.get_set(created.id)
    assert created.create_time is None and fetched.create_time is not None
    assert fetched.model_copy(update={"create_time": None, "update_time": None}) == created

    renamed = client.update_set(t.EvaluationSet(name=created.name, display_name="golden v2"))
    assert renamed.display_name == "golden v2"
    assert renamed.evaluation_items == [a.name, b.name]
    assert renamed.update_time >= fetched.update_time

    shrunk = client.update_set(
        {"name": created.name, "evaluationItems": [b.name]}, update_mask=["evaluation_items"]
    )
    assert shrunk.evaluation_items == [b.name]
    assert shrunk.display_name == "golden v2"

    assert [s.name for s in client.list_sets()] == [created.name]
    client.delete_set(created)
    with pytest.raises(errors.NotFound):
        client.get_set(created.name)


def test_set_with_missing_item_is_rejected(client: Any) -> None:
    with pytest.raises(errors.NotFound, match="evaluationItems\\[0\\]"):
        client.create_set(display_name="x", items=["123456"])


def test_update_of_output_only_field_is_rejected(client: Any) -> None:
    created = client.create_set(display_name="x", items=[client.create_item(request_item("x"))])
    with pytest.raises(errors.InvalidArgument, match="cannot be updated"):
        client.update_set({"name": created.name, "displayName": "y"}, update_mask=["create_time"])
