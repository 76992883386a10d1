"""The emulator's HTTP layer: parses requests, calls the backend, writes google.rpc errors."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._names import is_valid_id
from .._transport import REQUEST_ID_HEADER
from .backend import COLLECTIONS, EXPERIMENTS, ITEMS, RUNS, SETS, ApiError, Backend
from .faults import Fault, FaultMiddleware, FaultRegistry
from .gcs import GcsRoutes, ObjectStore

_API_PATH = re.compile(
    r"^/(?P<version>v1beta1|v1)/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
    r"/(?P<collection>[A-Za-z]+)(?:/(?P<rid>[^/:]+))?(?::(?P<verb>[a-zA-Z]+))?$"
)
_PROJECT = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$|^\d{1,20}$")
_LOCATION = re.compile(r"^[a-z0-9-]{1,40}$")


def _error(error: ApiError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.http_status)


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        raise ApiError("INVALID_ARGUMENT", "the request body is not valid JSON") from None


def _page_size(request: Request) -> int | None:
    raw = request.query_params.get("pageSize") or request.query_params.get("page_size")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise ApiError("INVALID_ARGUMENT", f"pageSize must be an integer, got {raw!r}") from None


class EmulatorApp:
    def __init__(self, backend: Backend, faults: FaultRegistry, objects: ObjectStore) -> None:
        self.backend = backend
        self.faults = faults
        routes = [
            Route("/_emulator/health", self.health, methods=["GET"]),
            Route("/_emulator/reset", self.reset, methods=["POST"]),
            Route("/_emulator/faults", self.fault_control, methods=["GET", "POST", "DELETE"]),
            *GcsRoutes(objects).routes(),
            Route("/{path:path}", self.api, methods=["GET", "POST", "PATCH", "DELETE"]),
        ]
        self.asgi = FaultMiddleware(Starlette(routes=routes), faults)

    # -- control endpoints ----------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def reset(self, request: Request) -> Response:
        self.backend.store.reset()
        self.faults.clear()
        return JSONResponse({})

    async def fault_control(self, request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse({"faults": self.faults.pending()})
        if request.method == "DELETE":
            self.faults.clear()
            return JSONResponse({})
        try:
            body = await _json_body(request)
            entries = body.get("faults", [body]) if isinstance(body, dict) else body
            for entry in entries:
                self.faults.add(Fault.from_json(entry))
        except (ApiError, ValueError, TypeError, AttributeError) as exc:
            return _error(ApiError("INVALID_ARGUMENT", f"bad fault: {exc}"))
        return JSONResponse({"faults": self.faults.pending()})

    # -- the API --------------------------------------------------------------------------

    async def api(self, request: Request) -> Response:
        try:
            return await self._dispatch(request)
        except ApiError as error:
            return _error(error)

    async def _dispatch(self, request: Request) -> Response:
        match = _API_PATH.match(request.url.path)
        if not match:
            raise ApiError("NOT_FOUND", f"no such method: {request.method} {request.url.path}")
        project, location = match["project"], match["location"]
        collection, rid, verb = match["collection"], match["rid"], match["verb"]
        if not _PROJECT.match(project) or not _LOCATION.match(location):
            raise ApiError("INVALID_ARGUMENT", "invalid project or location in the resource name")
        if collection not in COLLECTIONS:
            raise ApiError("NOT_FOUND", f"unknown collection {collection!r}")
        if rid is not None and not is_valid_id(rid):
            raise ApiError("INVALID_ARGUMENT", f"invalid resource id {rid!r}")
        parent = f"projects/{project}/locations/{location}"
        method = request.method
        request_id = request.headers.get(REQUEST_ID_HEADER)

        if rid is None:
            if verb is not None:
                raise ApiError("NOT_FOUND", f"no such method :{verb}")
            if method == "GET":
                params = request.query_params
                return JSONResponse(
                    self.backend.list_resources(
                        parent,
                        collection,
                        filter=params.get("filter"),
                        page_size=_page_size(request),
                        page_token=params.get("pageToken") or params.get("page_token"),
                    )
                )
            if method == "POST":
                body = await _json_body(request)
                create = {
                    ITEMS: self.backend.create_item,
                    SETS: self.backend.create_set,
                    RUNS: self.backend.create_run,
                    EXPERIMENTS: self.backend.create_experiment,
                }[collection]
                return JSONResponse(create(parent, body, request_id))
            raise ApiError("NOT_FOUND", f"{method} is not a method of {collection}")

        if verb is not None:
            if collection == RUNS and verb == "cancel" and method == "POST":
                self.backend.cancel_run(parent, rid)
                return JSONResponse({})
            raise ApiError("NOT_FOUND", f"no such method {collection}:{verb}")
        if method == "GET":
            return JSONResponse(self.backend.get(parent, collection, rid))
        if method == "DELETE":
            self.backend.delete(parent, collection, rid)
            return JSONResponse({})
        if method == "PATCH" and collection == SETS:
            body = await _json_body(request)
            mask = request.query_params.get("updateMask") or request.query_params.get("update_mask")
            return JSONResponse(self.backend.patch_set(parent, rid, body, mask))
        raise ApiError("NOT_FOUND", f"{method} is not a method of {collection}/{{id}}")
