"""Set and item revisions: frozen copies of a set and its items that runs can evaluate later.

As the discovery documents describe them:

* creating a set revision (``evaluationSets/{set}/revisions``, a long-running operation) copies
  the set's ``displayName`` and ``metadata``, and takes an item revision of each of its items:
  a copy of the item, payload included, so a payload kept in Cloud Storage is read in;
* ``snapshot.evaluationItems`` of a set revision names item revisions, not items;
* an item revision is shared by the set revisions that froze the same content, and is deleted
  with the last set revision that references it, not with its item;
* deleting a set deletes its revisions.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .._names import ITEMS, REVISIONS, SET_REVISIONS_LIST_KEY, SETS
from ..types import EvaluationItem, EvaluationItemType, EvaluationSet, EvaluationSetRevision
from ..types._base import wire_name
from .backend import (
    OPERATIONS,
    ApiError,
    Backend,
    new_id,
    now_rfc3339,
    operation_body,
    parse_body,
    project_of,
    split_name,
    split_revision_name,
    type_url,
)
from .gcs import ObjectStore

#: Where the operation each request id was answered with is kept (never listed by the API).
_ANSWERED = "revisions:create"

# The stored JSON's field names, as the models spell them on the wire.
_SET_ITEMS = wire_name(EvaluationSet, "evaluation_items")
_SET_FROZEN_FIELDS = tuple(wire_name(EvaluationSet, f) for f in ("display_name", "metadata"))
_ITEM_TYPE = wire_name(EvaluationItem, "evaluation_item_type")
_REQUEST = wire_name(EvaluationItem, "evaluation_request")
_RESPONSE = wire_name(EvaluationItem, "evaluation_response")
_GCS_URI = wire_name(EvaluationItem, "gcs_uri")


class Revisions:
    def __init__(self, backend: Backend, objects: ObjectStore) -> None:
        self.backend = backend
        self.store = backend.store
        self.objects = objects

    # -- set revisions --------------------------------------------------------------------

    def create(
        self, set_name: str, body: Any, version: str, request_id: str | None
    ) -> dict[str, Any]:
        """Freezes the set and its items; answers with the finished operation."""
        # Every field of a revision is the server's: the body may only be empty.
        parse_body(EvaluationSetRevision, body)
        if request_id and (earlier := self.store.by_request_id(set_name, _ANSWERED, request_id)):
            return earlier
        parent, set_id = split_name(set_name, SETS)
        source = self.backend.get(parent, SETS, set_id)
        stamp = now_rfc3339()
        rows: list[tuple[str, str, str, dict[str, Any], str | None]] = []
        frozen_items: list[str] = []
        item_names: list[str] = source.get(_SET_ITEMS) or []
        # A set holds items of its own location only (checked when it is written).
        ids = [split_name(name, ITEMS)[1] for name in item_names]
        stored = self.store.get_many(parent, ITEMS, ids)
        for index, (item_name, item_id) in enumerate(zip(item_names, ids, strict=True)):
            item = stored.get(item_id)
            if item is None:
                raise ApiError(
                    "FAILED_PRECONDITION",
                    f"{_SET_ITEMS}[{index}]: {item_name} no longer exists; remove it from "
                    "the set before taking a revision",
                )
            snapshot = self._frozen(item, index)
            # Named by its content: a revision of an unchanged item is taken once and shared.
            canonical = json.dumps(snapshot, sort_keys=True, separators=(",", ":"))
            rid = hashlib.sha256(canonical.encode()).hexdigest()[:20]
            revision_name = f"{item_name}/{REVISIONS}/{rid}"
            # One already stored (an unchanged item) is kept as it is, creation time included.
            revision = {"name": revision_name, "createTime": stamp, "snapshot": snapshot}
            rows.append((item_name, REVISIONS, rid, revision, None))
            frozen_items.append(revision_name)
        frozen_set: dict[str, Any] = {"name": set_name}
        for field in _SET_FROZEN_FIELDS:
            if field in source:
                frozen_set[field] = source[field]
        frozen_set[_SET_ITEMS] = frozen_items
        rid = new_id()
        revision = {"name": f"{set_name}/{REVISIONS}/{rid}", "createTime": stamp}
        revision["snapshot"] = frozen_set
        rows.append((set_name, REVISIONS, rid, revision, None))
        response = {"@type": type_url(version, "EvaluationSetRevision"), **revision}
        op_id, operation = operation_body(
            set_name, metadata=type_url(version, "GenericOperationMetadata"), response=response
        )
        rows.append((set_name, OPERATIONS, op_id, operation, None))
        if request_id:
            rows.append((set_name, _ANSWERED, op_id, operation, request_id))
        self.store.insert_batch(rows, or_ignore=True)
        return operation

    def _frozen(self, item: dict[str, Any], index: int) -> dict[str, Any]:
        """The item with its payload inline: a Cloud Storage object may change afterwards."""
        if _REQUEST in item or _RESPONSE in item or _GCS_URI not in item:
            return item
        uri = item[_GCS_URI]
        try:
            payload = self.objects.read_json(uri, project_of(item["name"]))
        except ApiError as exc:
            raise ApiError(
                "FAILED_PRECONDITION",
                f"{_SET_ITEMS}[{index}]: cannot read the payload {uri}: {exc.message}",
            ) from None
        is_result = item.get(_ITEM_TYPE) == EvaluationItemType.RESULT
        field = _RESPONSE if is_result else _REQUEST
        frozen = {key: value for key, value in item.items() if key != _GCS_URI}
        frozen[field] = payload
        return frozen

    def get(self, set_name: str, rid: str) -> dict[str, Any]:
        return self.backend.get(set_name, REVISIONS, rid)

    def list_json(self, set_name: str, page_size: int | None, page_token: str | None) -> str:
        """A page of the set's revisions as the response's JSON, newest first, as the service
        lists them."""
        parent, set_id = split_name(set_name, SETS)
        self.backend.get(parent, SETS, set_id)
        return self.backend.list_json(
            set_name,
            REVISIONS,
            filter=None,
            page_size=page_size,
            page_token=page_token,
            newest_first=True,
            key=SET_REVISIONS_LIST_KEY,
        )

    def delete(self, set_name: str, rid: str, version: str) -> dict[str, Any]:
        revision = self.get(set_name, rid)
        self.store.delete(set_name, REVISIONS, rid)
        self._drop_unreferenced(_item_revisions(revision))
        return self.backend.finished_operation(
            set_name, metadata=type_url(version, "DeleteOperationMetadata")
        )

    def owned(self, owner: str) -> list[str]:
        """The ids of the revisions of a set or an item."""
        return [
            str(body["name"]).rsplit("/", 1)[-1]
            for found, body in self.store.scan(REVISIONS, under=owner)
            if found == owner  # not a resource whose id merely starts with this one's
        ]

    def check_delete(self, name: str, collection: str, force: bool) -> None:
        """As the documents say: a set or item with revisions is deleted only with ``force``,
        and an item whose revision a set revision holds, not even then."""
        revisions = self.owned(name)
        if not revisions:
            return
        if collection == ITEMS:
            location = name.split(f"/{ITEMS}/", 1)[0]
            mine = {f"{name}/{REVISIONS}/{rid}" for rid in revisions}
            for _owner, body in self.store.scan(REVISIONS, under=f"{location}/{SETS}/"):
                held = mine & set(_item_revisions(body))
                if held:
                    raise ApiError(
                        "FAILED_PRECONDITION",
                        f"{name} has a revision held by the set revision {body['name']}: "
                        "delete that set revision first",
                    )
        if not force:
            what = "set" if collection == SETS else "item"
            raise ApiError(
                "FAILED_PRECONDITION",
                f"{name} has {len(revisions)} revision(s): delete them, or delete the {what} "
                "with force=true to delete them too",
            )

    def forget_item(self, item_name: str) -> None:
        """A deleted item's revisions (none a set revision holds) go with it."""
        for rid in self.owned(item_name):
            self.store.delete(item_name, REVISIONS, rid)

    def forget_set(self, set_name: str) -> None:
        """A deleted set's revisions go with it."""
        dropped: list[str] = []
        for owner, body in self.store.scan(REVISIONS, under=set_name):
            if owner == set_name:  # not a set whose id merely starts with this one's
                self.store.delete(owner, REVISIONS, str(body["name"]).rsplit("/", 1)[-1])
                dropped += _item_revisions(body)
        self._drop_unreferenced(dropped)

    def _drop_unreferenced(self, candidates: list[str]) -> None:
        if not candidates:
            return
        # A set holds items of its own location only: the set revisions there are all that
        # can reference them.
        location = candidates[0].split(f"/{ITEMS}/", 1)[0]
        referenced = {
            name
            for _, body in self.store.scan(REVISIONS, under=f"{location}/{SETS}/")
            for name in _item_revisions(body)
        }
        for name in set(candidates) - referenced:
            owner, rid = split_revision_name(name, ITEMS)
            self.store.delete(owner, REVISIONS, rid)

    # -- item revisions -------------------------------------------------------------------

    def get_item_revision(self, item_name: str, rid: str) -> dict[str, Any]:
        return self.backend.get(item_name, REVISIONS, rid)

    def frozen_items(self, revision_name: str) -> list[str]:
        """The item revision names a set revision froze (what a run on it evaluates)."""
        set_name, rid = split_revision_name(revision_name, SETS)
        return _item_revisions(self.get(set_name, rid))

    def frozen_item(self, revision_name: str) -> dict[str, Any]:
        """The item an item revision holds."""
        return dict(self.get_item_revision(*split_revision_name(revision_name, ITEMS))["snapshot"])


def _item_revisions(set_revision: dict[str, Any]) -> list[str]:
    snapshot = set_revision.get("snapshot") or {}
    return [str(name) for name in snapshot.get(_SET_ITEMS) or []]
