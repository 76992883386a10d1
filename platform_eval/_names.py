"""Resource names: full names or bare ids in, validated full names out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_NAME = re.compile(
    r"^projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/(?P<collection>[A-Za-z]+)/(?P<id>[^/]+)$"
)

_OPERATION = re.compile(r"^projects/[^/]+/locations/[^/]+/(?:[A-Za-z]+/[^/]+/)*operations/[^/]+$")
_OPERATIONS_OWNER = re.compile(r"^projects/[^/]+/locations/[^/]+(?:/[A-Za-z]+/[^/]+)?$")
_REVISION = re.compile(
    r"^projects/[^/]+/locations/[^/]+/(?P<collection>[A-Za-z]+)/[^/]+/revisions/(?P<id>[^/]+)$"
)

ITEMS = "evaluationItems"
SETS = "evaluationSets"
RUNS = "evaluationRuns"
METRICS = "evaluationMetrics"
EXPERIMENTS = "evaluationExperiments"
#: Revisions of a set (create, get, list, delete) or of an item (get), in v1beta1.
REVISIONS = "revisions"
#: The key a list of set revisions comes under (``ListEvaluationSetRevisionsResponse``).
SET_REVISIONS_LIST_KEY = "evaluationSetRevisions"


class Named(Protocol):
    """A resource object: anything with its resource ``name``."""

    @property
    def name(self) -> str | None: ...


#: A resource as the client's methods take it: its name or id, the resource itself, or its
#: JSON object.
ResourceRef = str | Named | Mapping[str, Any]


def name_of(obj: Any, kind: str) -> str:
    """The resource name (or id) of a typed object, dict or string."""
    if isinstance(obj, str):
        return obj
    name = obj.get("name") if isinstance(obj, dict) else getattr(obj, "name", None)
    if not name:
        raise ValueError(f"this {kind} has no name; pass the resource name or the id")
    return str(name)


def resource_name(parent: str, collection: str, name_or_id: str) -> str:
    """``parent/collection/id`` from a bare id, or the full name checked against collection."""
    value = name_or_id.strip()
    if value.startswith("projects/"):
        match = _NAME.match(value)
        if not match or match["collection"] != collection or not _ID.match(match["id"]):
            raise ValueError(
                f"{value!r} is not a resource name of {collection} "
                f"(expected projects/{{project}}/locations/{{location}}/{collection}/{{id}})"
            )
        return value
    if not _ID.match(value):
        raise ValueError(f"{value!r} is not a valid id of {collection}")
    return f"{parent}/{collection}/{value}"


def is_valid_id(value: str) -> bool:
    return bool(_ID.match(value))


def _matching(value: str, pattern: re.Pattern[str], what: str, shape: str) -> str:
    if not pattern.match(value.strip()):
        raise ValueError(
            f"{value!r} is not {what} "
            f"(expected projects/{{project}}/locations/{{location}}/{shape})"
        )
    return value.strip()


def operation_name(value: str) -> str:
    """A long-running operation's full name, checked: ``{resource}/operations/{id}``."""
    return _matching(
        value, _OPERATION, "an operation name", "{collection}/{id}/operations/{operation}"
    )


def operations_owner(value: str) -> str:
    """The full name of a resource whose operations are listed, or of a location (all of
    its operations, ``projects.locations.operations.list``)."""
    return _matching(value, _OPERATIONS_OWNER, "a resource name", "{collection}/{id}")


def is_revision_name(value: str, collection: str) -> bool:
    match = _REVISION.match(value.strip())
    return bool(match and match["collection"] == collection and _ID.match(match["id"]))


def revision_name(value: str, collection: str) -> str:
    """A revision's full name, checked: ``{collection}/{id}/revisions/{revision}``."""
    if not is_revision_name(value, collection):
        raise ValueError(
            f"{value!r} is not a revision name of {collection} (expected projects/{{project}}/"
            f"locations/{{location}}/{collection}/{{id}}/revisions/{{revision}})"
        )
    return value.strip()
