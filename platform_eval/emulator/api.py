"""The evaluation API's methods: one handler per method of the discovery documents.

``API.table`` lists them (``routes.RouteTable``); ``API.serve`` reads a request into a call,
runs its handler and answers errors in google.rpc's shape. A v1 answer leaves out what only
v1beta1 has.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .._names import EXPERIMENTS, ITEMS, METRICS, REVISIONS, RUNS, SETS
from ._asgi import error_response
from .backend import OPERATIONS, ApiError, Backend
from .bodies import parse_json_object, read_body
from .imports import SetImporter
from .limits import Limits
from .location_methods import LocationMethods
from .revisions import Revisions
from .routes import WAITED, WITH_OPERATIONS, Call, Method, RouteTable
from .store import StoredJson
from .versions import served_paths, strip_for_v1

_OPS = f"{{id}}/{OPERATIONS}"
_REVISIONS = f"{{id}}/{REVISIONS}"


class API:
    def __init__(
        self,
        backend: Backend,
        revisions: Revisions,
        importer: SetImporter,
        limits: Limits,
        location: LocationMethods,
    ) -> None:
        self.backend = backend
        self.revisions = revisions
        self.importer = importer
        self.limits = limits
        beta = {"v1": False}
        resources = [ITEMS, SETS, RUNS, METRICS, EXPERIMENTS]
        # The v1beta1 document's methods, exactly (tests/emulator/test_emulator_routes.py compares).
        # v1 serves them but for revisions and evaluationExperiments, which it has not; the
        # operations of a resource are served on v1 too, since v1's deletes name them.
        self.table = RouteTable(
            [
                *(Method("GET", c, "", self.list_resources) for c in resources),
                *(Method("POST", c, "", self.create) for c in resources),
                *(Method("GET", c, "{id}", self.get) for c in resources),
                *(Method("DELETE", c, "{id}", self.delete) for c in resources),
                Method("PATCH", SETS, "{id}", self.patch),
                Method("PATCH", EXPERIMENTS, "{id}", self.patch),
                Method("POST", SETS, ":import", self.import_set),
                Method("POST", RUNS, "{id}:cancel", self.cancel_run),
                # The operations of one resource.
                *(Method("GET", c, _OPS, self.list_operations) for c in WITH_OPERATIONS),
                *(Method("GET", c, f"{_OPS}/{{id}}", self.get_operation) for c in WITH_OPERATIONS),
                *(
                    Method("DELETE", c, f"{_OPS}/{{id}}", self.delete_operation)
                    for c in WITH_OPERATIONS
                ),
                *(Method("POST", c, f"{_OPS}/{{id}}:wait", self.get_operation) for c in WAITED),
                # projects.locations.operations: every operation of the location.
                Method("GET", OPERATIONS, "", self.list_location_operations),
                Method("GET", OPERATIONS, "{id}", self.get_location_operation),
                Method("POST", OPERATIONS, "{id}:wait", self.get_location_operation),
                Method("POST", OPERATIONS, "{id}:cancel", self.cancel_location_operation),
                Method("DELETE", OPERATIONS, "{id}", self.delete_location_operation),
                # Revisions.
                Method("POST", SETS, _REVISIONS, self.create_revision, **beta),
                Method("GET", SETS, _REVISIONS, self.list_revisions, **beta),
                Method("GET", SETS, f"{_REVISIONS}/{{id}}", self.get_revision, **beta),
                Method("DELETE", SETS, f"{_REVISIONS}/{{id}}", self.delete_revision, **beta),
                Method("GET", ITEMS, f"{_REVISIONS}/{{id}}", self.get_item_revision, **beta),
                # The location's own methods (evaluateInstances, ...).
                *location.methods(),
            ]
        )

    async def serve(self, request: Request) -> Response:
        try:
            call, handler = self.table.call(request)
            response = await handler(call)
        except ApiError as error:
            return error_response(error)
        if call.version == "v1" and call.sub is None and response.status_code == 200:
            return _as_v1(call.collection, response)
        return response

    async def _body(self, call: Call) -> dict[str, Any]:
        raw = await read_body(call.request, self.limits.body_bytes)
        return parse_json_object(raw, limits=self.limits)

    # -- the resources ------------------------------------------------------------------------

    async def list_resources(self, call: Call) -> Response:
        return self._list(call, call.parent, call.collection)

    def _list(self, call: Call, parent: str, collection: str) -> Response:
        return _json_text(
            self.backend.list_json(
                parent,
                collection,
                filter=call.query("filter"),
                page_size=_page_size(call),
                page_token=call.query("pageToken"),
                order_by=call.query("orderBy"),
            )
        )

    async def create(self, call: Call) -> Response:
        body = await self._body(call)
        metric_id = call.query("evaluationMetricId")
        created = self.backend.create(
            call.parent,
            call.collection,
            body,
            call.request_id,
            version=call.version,
            resource_id=metric_id if call.collection == METRICS else None,
        )
        if isinstance(created, StoredJson):
            return _json_text(created.text)
        return JSONResponse(created)

    async def get(self, call: Call) -> Response:
        return _json_text(self.backend.get_json(call.parent, call.collection, call.rid or ""))

    async def delete(self, call: Call) -> Response:
        parent, collection, rid = call.parent, call.collection, call.rid or ""
        if collection in (SETS, ITEMS):
            force = (call.query("force") or "").lower() in ("true", "1")
            self.backend.get(parent, collection, rid)  # NOT_FOUND before anything else
            self.revisions.check_delete(call.name, collection, force)
        deleted = self.backend.delete(parent, collection, rid, call.version)
        if collection == SETS:
            self.revisions.forget_set(call.name)
        elif collection == ITEMS:
            self.revisions.forget_item(call.name)
        return JSONResponse(deleted)

    async def patch(self, call: Call) -> Response:
        body = await self._body(call)
        mask = call.query("updateMask")
        patched = self.backend.patch(
            call.parent, call.collection, call.rid or "", body, mask, call.version
        )
        return JSONResponse(patched)

    async def import_set(self, call: Call) -> Response:
        body = await self._body(call)
        return JSONResponse(self.importer(call.parent, body, call.version, call.request_id))

    async def cancel_run(self, call: Call) -> Response:
        self.backend.cancel_run(call.parent, call.rid or "")
        return JSONResponse({})

    # -- a resource's operations ----------------------------------------------------------------

    async def list_operations(self, call: Call) -> Response:
        return self._list(call, call.name, OPERATIONS)

    async def get_operation(self, call: Call) -> Response:
        # Every operation of the emulator is done when it is answered: :wait has nothing to
        # wait for.
        return JSONResponse(self.backend.get_operation(call.name, call.subid or ""))

    async def delete_operation(self, call: Call) -> Response:
        self.backend.delete_operation(call.name, call.subid or "")
        return JSONResponse({})

    # -- the location's operations --------------------------------------------------------------

    def _location_operation(self, call: Call) -> tuple[str, dict[str, Any]]:
        """(owner, body) of the operation a location-level name points at, whatever resource
        it belongs to."""
        # Under the location: a resource's operations, and the location's own (loss clusters).
        found = self.backend.store.find(OPERATIONS, call.parent, call.rid or "")
        if found is not None and not _under(found[0], call.parent):
            found = None
        if found is None:
            raise ApiError("NOT_FOUND", f"{call.parent}/{OPERATIONS}/{call.rid} not found")
        return found

    async def get_location_operation(self, call: Call) -> Response:
        return JSONResponse(self._location_operation(call)[1])

    async def cancel_location_operation(self, call: Call) -> Response:
        self._location_operation(call)
        return JSONResponse({})  # done already: there is nothing left to cancel

    async def delete_location_operation(self, call: Call) -> Response:
        owner, _ = self._location_operation(call)
        self.backend.delete_operation(owner, call.rid or "")
        return JSONResponse({})

    async def list_location_operations(self, call: Call) -> Response:
        """A page of the location's operations, oldest first; the token is the last name."""
        parent = call.parent
        size = _page_size(call) or 100
        token = call.query("pageToken")
        after = _operation_token(token, parent) if token else ""
        names = sorted(
            (str(body["name"]), body)
            for owner, body in self.backend.store.scan(OPERATIONS, under=parent)
            if _under(owner, parent)
        )
        rest = [(name, body) for name, body in names if name > after]
        page = rest[:size]
        answer: dict[str, Any] = {"operations": [body for _, body in page]}
        if len(rest) > size:
            answer["nextPageToken"] = base64.urlsafe_b64encode(page[-1][0].encode()).decode()
        return JSONResponse(answer)

    # -- revisions ------------------------------------------------------------------------------

    async def create_revision(self, call: Call) -> Response:
        body = await self._body(call)
        return JSONResponse(self.revisions.create(call.name, body, call.version, call.request_id))

    async def list_revisions(self, call: Call) -> Response:
        token = call.query("pageToken")
        return _json_text(self.revisions.list_json(call.name, _page_size(call), token))

    async def get_revision(self, call: Call) -> Response:
        return JSONResponse(self.revisions.get(call.name, call.subid or ""))

    async def delete_revision(self, call: Call) -> Response:
        return JSONResponse(self.revisions.delete(call.name, call.subid or "", call.version))

    async def get_item_revision(self, call: Call) -> Response:
        return JSONResponse(self.revisions.get_item_revision(call.name, call.subid or ""))


def _under(owner: str, parent: str) -> bool:
    return owner == parent or owner.startswith(f"{parent}/")


def _page_size(call: Call) -> int | None:
    raw = call.query("pageSize")
    if raw is None:
        return None
    if not re.fullmatch(r"-?\d{1,12}", raw.strip()):
        raise ApiError("INVALID_ARGUMENT", f"pageSize must be an integer, got {raw!r}")
    return int(raw)


def _operation_token(token: str, parent: str) -> str:
    try:
        name = base64.urlsafe_b64decode(token.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        name = ""
    if not name.startswith(f"{parent}/"):
        raise ApiError("INVALID_ARGUMENT", "pageToken: not a page token of this listing")
    return name


def _as_v1(collection: str, response: Response) -> Response:
    """A v1 answer: the resource (or each listed one) without fields only v1beta1 has."""
    if not served_paths(collection):
        return response  # nothing of this collection's resources is v1beta1's alone
    try:
        body = json.loads(bytes(response.body))
    except ValueError:
        return response
    if not isinstance(body, dict):
        return response
    if isinstance(body.get(collection), list):
        body[collection] = [strip_for_v1(collection, r) for r in body[collection]]
    elif "name" in body:
        body = strip_for_v1(collection, body)
    return JSONResponse(body)


def _json_text(text: str) -> Response:
    """JSON already encoded (as the store keeps it): answered as it is."""
    return Response(text.encode(), media_type="application/json")
