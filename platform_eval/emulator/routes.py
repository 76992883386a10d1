"""The emulator's API methods as one table: (HTTP method, collection, path shape) -> handler.

Every API path is read once, by one pattern, into a ``Call``; the call's shape (``""``,
``"{id}"``, ``"{id}:cancel"``, ``"{id}/operations/{id}:wait"``, ...) and the HTTP method pick
the entry. A path that names no entry is NOT_FOUND saying so, as the service answers it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

from pydantic.alias_generators import to_snake
from starlette.requests import Request
from starlette.responses import Response

from .._names import ITEMS, METRICS, RUNS, SETS, is_valid_id
from .._transport import REQUEST_ID_HEADER
from .backend import COLLECTIONS, OPERATIONS, ApiError
from .versions import V1BETA1_ONLY_COLLECTIONS

_API_PATH = re.compile(
    r"^/(?P<version>v1beta1|v1)/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
    r"/(?P<collection>[A-Za-z]+)"
    r"(?:/(?P<rid>[^/:]+)(?:/(?P<sub>[A-Za-z]+)(?:/(?P<subid>[^/:]+))?)?)?"
    r"(?::(?P<verb>[a-zA-Z]+))?$"
)
#: Collections whose resources have operations (get, list, delete), as the documents list them,
#: and those whose operations also have :wait.
WITH_OPERATIONS = (ITEMS, SETS, RUNS, METRICS)
WAITED = (ITEMS, SETS, RUNS)
#: A method of the location itself (``.../locations/l:evaluateInstances``; the official SDK
#: sends ``.../locations/l/:evaluateInstances``), or the global ``v1beta1:evaluateInstances``.
_LOCATION_METHOD = re.compile(
    r"^/(?P<version>v1beta1|v1)(?:/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/?)?"
    r":(?P<verb>[a-zA-Z]+)$"
)
#: The collection name a location's own methods are listed under in the table.
LOCATION = ""
_PROJECT = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$|^\d{1,20}$")
_LOCATION = re.compile(r"^[a-z0-9-]{1,40}$")


@dataclass(frozen=True)
class Call:
    """One API request, its path read into parts."""

    request: Request
    version: str
    #: ``projects/{project}/locations/{location}``
    parent: str
    collection: str
    rid: str | None
    sub: str | None
    subid: str | None
    verb: str | None

    @cached_property
    def shape(self) -> str:
        shape = "" if self.rid is None else "{id}"
        if self.sub is not None:
            shape += f"/{self.sub}" + ("" if self.subid is None else "/{id}")
        return shape if self.verb is None else f"{shape}:{self.verb}"

    @property
    def name(self) -> str:
        """The resource the path names (the owner of a sub-resource)."""
        return f"{self.parent}/{self.collection}/{self.rid}"

    @property
    def request_id(self) -> str | None:
        return self.request.headers.get(REQUEST_ID_HEADER)

    def query(self, name: str) -> str | None:
        """A query parameter by its camelCase name, or its snake_case one, which the service
        accepts too."""
        params = self.request.query_params
        return params.get(name) or params.get(to_snake(name))


Handler = Callable[[Call], Awaitable[Response]]


@dataclass(frozen=True)
class Method:
    http: str
    collection: str
    shape: str
    handler: Handler
    #: False for methods only the v1beta1 document has.
    v1: bool = True


class RouteTable:
    def __init__(self, methods: Iterable[Method]) -> None:
        self._methods: dict[tuple[str, str, str], Method] = {}
        for method in methods:
            key = (method.http, method.collection, method.shape)
            if key in self._methods:
                raise ValueError(f"two handlers for {key}")
            self._methods[key] = method

    def __iter__(self) -> Iterator[Method]:
        return iter(self._methods.values())

    def call(self, request: Request) -> tuple[Call, Handler]:
        """The request read as a call, and the handler that serves it; ApiError otherwise."""
        call = _read(request)
        http = request.method
        method = self._methods.get((http, call.collection, call.shape))
        if method is None or (call.version == "v1" and not method.v1):
            raise ApiError("NOT_FOUND", f"no such method: {http} {request.url.path}")
        return call, method.handler


def _read(request: Request) -> Call:
    path = request.url.path
    own = _LOCATION_METHOD.match(path)
    if own:
        project, location = own["project"], own["location"]
        if project is not None and (not _PROJECT.match(project) or not _LOCATION.match(location)):
            raise ApiError("INVALID_ARGUMENT", "invalid project or location in the resource name")
        parent = f"projects/{project}/locations/{location}" if project is not None else ""
        return Call(request, own["version"], parent, LOCATION, None, None, None, own["verb"])
    match = _API_PATH.match(path)
    if not match:
        raise ApiError("NOT_FOUND", f"no such method: {request.method} {path}")
    project, location, collection = match["project"], match["location"], match["collection"]
    if not _PROJECT.match(project) or not _LOCATION.match(location):
        raise ApiError("INVALID_ARGUMENT", "invalid project or location in the resource name")
    if collection not in COLLECTIONS and collection != OPERATIONS:
        raise ApiError("NOT_FOUND", f"unknown collection {collection!r}")
    if match["version"] == "v1" and collection in V1BETA1_ONLY_COLLECTIONS:
        raise ApiError("NOT_FOUND", f"{collection} is not part of the v1 API: use v1beta1 for it")
    for part in ("rid", "subid"):
        if match[part] is not None and not is_valid_id(match[part]):
            raise ApiError("INVALID_ARGUMENT", f"invalid resource id {match[part]!r}")
    return Call(
        request=request,
        version=match["version"],
        parent=f"projects/{project}/locations/{location}",
        collection=collection,
        rid=match["rid"],
        sub=match["sub"],
        subid=match["subid"],
        verb=match["verb"],
    )
