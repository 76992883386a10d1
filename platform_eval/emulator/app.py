"""The emulator's HTTP layer: parses requests, calls the backend, writes google.rpc errors."""

from __future__ import annotations

import base64
import json
import re
import sqlite3
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from .._names import EXPERIMENTS, ITEMS, METRICS, REVISIONS, RUNS, SETS, is_valid_id
from .._transport import REQUEST_ID_HEADER
from ..types import EvaluationItem, EvaluationMetric, EvaluationRun, EvaluationSet, WireModel
from ._asgi import error_response
from .access import RequireToken
from .backend import COLLECTIONS, OPERATIONS, ApiError, Backend
from .bodies import DEFAULT_MAX_BODY_BYTES, parse_json, parse_json_object, read_body
from .faults import Fault, FaultMiddleware, FaultRegistry
from .gcs import GcsRoutes, ObjectStore
from .imports import SetImporter
from .openapi import openapi_document
from .otlp import OtlpRoutes
from .revisions import Revisions
from .store import StoredJson
from .store import failure as store_failure
from .versions import V1BETA1_ONLY_COLLECTIONS, strip_for_v1, v1beta1_only

_API_PATH = re.compile(
    r"^/(?P<version>v1beta1|v1)/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
    r"/(?P<collection>[A-Za-z]+)"
    r"(?:/(?P<rid>[^/:]+)(?:/(?P<sub>[A-Za-z]+)(?:/(?P<subid>[^/:]+))?)?)?"
    r"(?::(?P<verb>[a-zA-Z]+))?$"
)
_PROJECT = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$|^\d{1,20}$")
_LOCATION = re.compile(r"^[a-z0-9-]{1,40}$")


async def _http_error(request: Request, exc: Exception) -> Response:
    # Starlette's own answers (no route, method not allowed) in the API's error shape.
    status = exc.status_code if isinstance(exc, HTTPException) else 400
    rpc = {404: "NOT_FOUND", 405: "NOT_FOUND"}.get(status, "INVALID_ARGUMENT")
    return error_response(ApiError(rpc, f"no such method: {request.method} {request.url.path!r}"))


async def _internal_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, sqlite3.Error):
        # The database's own words ("database or disk is full"), and a status clients retry.
        return error_response(ApiError("UNAVAILABLE", store_failure(exc)))
    return error_response(ApiError("INTERNAL", f"the emulator failed: {type(exc).__name__}"))


def _page_size(request: Request) -> int | None:
    raw = request.query_params.get("pageSize") or request.query_params.get("page_size")
    if raw is None:
        return None
    if not re.fullmatch(r"-?\d{1,12}", raw.strip()):
        raise ApiError("INVALID_ARGUMENT", f"pageSize must be an integer, got {raw!r}")
    return int(raw)


class EmulatorApp:
    def __init__(
        self,
        backend: Backend,
        faults: FaultRegistry,
        objects: ObjectStore,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        auth_token: str | None = None,
        executor_health: Callable[[], dict[str, Any]] = lambda: {"state": "running"},
    ) -> None:
        self.backend = backend
        self.executor_health = executor_health
        self.import_set = SetImporter(backend, objects)
        self.revisions = Revisions(backend, objects)
        self.faults = faults
        self.max_body_bytes = max_body_bytes
        routes = [
            Route("/_emulator/health", self.health, methods=["GET"]),
            Route("/_emulator/openapi.json", self.openapi, methods=["GET"]),
            Route("/_emulator/reset", self.reset, methods=["POST"]),
            Route("/_emulator/progress/{name:path}", self.progress, methods=["GET"]),
            Route("/_emulator/faults", self.fault_control, methods=["GET", "POST", "DELETE"]),
            *GcsRoutes(objects, max_body_bytes).routes(),
            *OtlpRoutes(backend.store, max_body_bytes).routes(),
            Route("/{path:path}", self.api, methods=["GET", "POST", "PATCH", "DELETE"]),
        ]
        # A bug must still answer in the API's error shape (the traceback goes to the log).
        handlers: dict[Any, Any] = {
            Exception: _internal_error,
            HTTPException: _http_error,
        }
        app = Starlette(routes=routes, exception_handlers=handlers)
        self.asgi: ASGIApp = FaultMiddleware(app, faults)
        if auth_token:
            self.asgi = RequireToken(self.asgi, auth_token)

    async def _json_body(self, request: Request) -> dict[str, Any]:
        return parse_json_object(await read_body(request, self.max_body_bytes))

    # -- control endpoints ----------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        """200 ``ok`` while runs execute; 503 ``degraded`` when they cannot (the executor
        stopped, or a full disk keeps it from recording a run), saying why."""
        executor = self.executor_health()
        healthy = executor["state"] == "running"
        return JSONResponse(
            {"status": "ok" if healthy else "degraded", "executor": executor},
            status_code=200 if healthy else 503,
        )

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi_document())

    async def progress(self, request: Request) -> Response:
        """How far a run is: the API has no field for it, so the emulator serves it here."""
        name = request.path_params["name"]
        found = self.backend.store.progress(name)
        if found is None:
            return error_response(ApiError("NOT_FOUND", f"no progress recorded for {name}"))
        done, total = found
        return JSONResponse({"completedItems": done, "totalItems": total})

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
            body = parse_json(await read_body(request, self.max_body_bytes))
            entries = body.get("faults", [body]) if isinstance(body, dict) else body
            if not isinstance(entries, list):
                raise ValueError('expected a fault object, a list of them or {"faults": [...]}')
            # All or nothing: one bad entry registers none of them.
            faults = [Fault.from_json(entry) for entry in entries]
        except ApiError as error:
            return error_response(error)
        except ValueError as exc:
            return error_response(ApiError("INVALID_ARGUMENT", f"bad fault: {exc}"))
        for fault in faults:
            self.faults.add(fault)
        return JSONResponse({"faults": self.faults.pending()})

    # -- the API --------------------------------------------------------------------------

    async def api(self, request: Request) -> Response:
        try:
            response = await self._dispatch(request)
        except ApiError as error:
            return error_response(error)
        match = _API_PATH.match(request.url.path)
        if (
            match
            and match["version"] == "v1"
            and match["sub"] is None
            and response.status_code == 200
        ):
            return _as_v1(match["collection"], response)
        return response

    async def _dispatch(self, request: Request) -> Response:
        match = _API_PATH.match(request.url.path)
        if not match:
            raise ApiError("NOT_FOUND", f"no such method: {request.method} {request.url.path}")
        project, location = match["project"], match["location"]
        collection, rid, verb = match["collection"], match["rid"], match["verb"]
        if not _PROJECT.match(project) or not _LOCATION.match(location):
            raise ApiError("INVALID_ARGUMENT", "invalid project or location in the resource name")
        if collection == OPERATIONS and match["sub"] is None:
            return self._location_operation(request, project, location, rid, verb)
        if collection not in COLLECTIONS:
            raise ApiError("NOT_FOUND", f"unknown collection {collection!r}")
        if match["version"] == "v1" and collection in V1BETA1_ONLY_COLLECTIONS:
            raise ApiError(
                "NOT_FOUND", f"{collection} is not part of the v1 API: use v1beta1 for it"
            )
        if rid is not None and not is_valid_id(rid):
            raise ApiError("INVALID_ARGUMENT", f"invalid resource id {rid!r}")
        parent = f"projects/{project}/locations/{location}"
        method = request.method
        request_id = request.headers.get(REQUEST_ID_HEADER)
        if match["sub"] is not None:
            return await self._sub_resource(request, f"{parent}/{collection}/{rid}", match)

        if rid is None:
            if collection == SETS and verb == "import" and method == "POST":
                body = await self._json_body(request)
                return JSONResponse(self.import_set(parent, body, match["version"], request_id))
            if verb is not None:
                raise ApiError("NOT_FOUND", f"no such method :{verb}")
            if method == "GET":
                return self._list(request, parent, collection)
            if method == "POST":
                body = await self._json_body(request)
                check_v1_body(match["version"], collection, body)
                if collection == METRICS:
                    metric_id = request.query_params.get(
                        "evaluationMetricId"
                    ) or request.query_params.get("evaluation_metric_id")
                    return _created(self.backend.create_metric(parent, body, request_id, metric_id))
                create = {
                    ITEMS: self.backend.create_item,
                    SETS: self.backend.create_set,
                    RUNS: self.backend.create_run,
                    EXPERIMENTS: self.backend.create_experiment,
                }[collection]
                return _created(create(parent, body, request_id))
            raise ApiError("NOT_FOUND", f"{method} is not a method of {collection}")

        if verb is not None:
            if collection == RUNS and verb == "cancel" and method == "POST":
                self.backend.cancel_run(parent, rid)
                return JSONResponse({})
            raise ApiError("NOT_FOUND", f"no such method {collection}:{verb}")
        if method == "GET":
            return _json_text(self.backend.get_json(parent, collection, rid))
        if method == "DELETE":
            name = f"{parent}/{collection}/{rid}"
            if collection in (SETS, ITEMS):
                force = request.query_params.get("force", "").lower() in ("true", "1")
                self.backend.get(parent, collection, rid)  # NOT_FOUND before anything else
                self.revisions.check_delete(name, collection, force)
            deleted = self.backend.delete(parent, collection, rid, match["version"])
            if collection == SETS:
                self.revisions.forget_set(name)
            elif collection == ITEMS:
                self.revisions.forget_item(name)
            return JSONResponse(deleted)
        if method == "PATCH" and collection in (SETS, EXPERIMENTS):
            body = await self._json_body(request)
            check_v1_body(match["version"], collection, body)
            mask = request.query_params.get("updateMask") or request.query_params.get("update_mask")
            patch = self.backend.patch_set if collection == SETS else self.backend.patch_experiment
            return JSONResponse(patch(parent, rid, body, mask))
        raise ApiError("NOT_FOUND", f"{method} is not a method of {collection}/{{id}}")

    def _list(self, request: Request, parent: str, collection: str) -> Response:
        params = request.query_params
        return _json_text(
            self.backend.list_json(
                parent,
                collection,
                filter=params.get("filter"),
                page_size=_page_size(request),
                page_token=params.get("pageToken") or params.get("page_token"),
                order_by=params.get("orderBy") or params.get("order_by"),
            )
        )

    async def _sub_resource(self, request: Request, owner: str, match: re.Match[str]) -> Response:
        """``{resource}/operations[/{id}[:wait]]`` and ``{set or item}/revisions[/{id}]``."""
        sub, subid, verb, method = match["sub"], match["subid"], match["verb"], request.method
        if sub == REVISIONS and match["version"] == "v1beta1":
            return await self._revision(request, owner, match)
        if sub != OPERATIONS:
            raise ApiError("NOT_FOUND", f"no such collection {sub!r} under {owner}")
        if subid is not None and not is_valid_id(subid):
            raise ApiError("INVALID_ARGUMENT", f"invalid operation id {subid!r}")
        if subid is None:
            if method != "GET" or verb is not None:
                raise ApiError("NOT_FOUND", f"{method} is not a method of {owner}/operations")
            return self._list(request, owner, OPERATIONS)
        if verb == "wait" and method == "POST":
            # Every operation of the emulator is done when it is answered: nothing to wait for.
            return JSONResponse(self.backend.get_operation(owner, subid))
        if verb is None and method == "GET":
            return JSONResponse(self.backend.get_operation(owner, subid))
        if verb is None and method == "DELETE":
            self.backend.delete_operation(owner, subid)
            return JSONResponse({})
        raise ApiError("NOT_FOUND", f"no such method: {method} {request.url.path}")

    def _location_operation(
        self, request: Request, project: str, location: str, rid: str | None, verb: str | None
    ) -> Response:
        """``projects.locations.operations`` (get, list, delete, cancel, wait): every
        operation of the location, found by its id whatever resource it belongs to."""
        if not _PROJECT.match(project) or not _LOCATION.match(location):
            raise ApiError("INVALID_ARGUMENT", "invalid project or location in the resource name")
        parent = f"projects/{project}/locations/{location}"
        method = request.method
        if rid is None:
            if method != "GET" or verb is not None:
                raise ApiError("NOT_FOUND", f"{method} is not a method of {parent}/operations")
            return JSONResponse(self._operations_page(request, parent))
        if not is_valid_id(rid):
            raise ApiError("INVALID_ARGUMENT", f"invalid operation id {rid!r}")
        found = self.backend.store.find(OPERATIONS, f"{parent}/", rid)
        if found is None:
            raise ApiError("NOT_FOUND", f"{parent}/operations/{rid} not found")
        owner, body = found
        if verb is None and method == "GET":
            return JSONResponse(body)
        if verb == "wait" and method == "POST":
            # Every operation of the emulator is done when it is answered: nothing to wait for.
            return JSONResponse(body)
        if verb == "cancel" and method == "POST":
            return JSONResponse({})  # done already: there is nothing left to cancel
        if verb is None and method == "DELETE":
            self.backend.delete_operation(owner, rid)
            return JSONResponse({})
        raise ApiError("NOT_FOUND", f"no such method: {method} {request.url.path}")

    def _operations_page(self, request: Request, parent: str) -> dict[str, Any]:
        """A page of the location's operations, oldest first; the token is the last name."""
        size = _page_size(request) or 100
        token = request.query_params.get("pageToken") or request.query_params.get("page_token")
        after = _operation_token(token, parent) if token else ""
        names = sorted(
            (str(body["name"]), body)
            for _, body in self.backend.store.scan(OPERATIONS, under=f"{parent}/")
        )
        rest = [(name, body) for name, body in names if name > after]
        page = rest[:size]
        answer: dict[str, Any] = {"operations": [body for _, body in page]}
        if len(rest) > size:
            answer["nextPageToken"] = base64.urlsafe_b64encode(page[-1][0].encode()).decode()
        return answer

    async def _revision(self, request: Request, owner: str, match: re.Match[str]) -> Response:
        """Set revisions (create, get, list, delete) and item revisions (get); v1beta1 only."""
        collection, subid, method = match["collection"], match["subid"], request.method
        if subid is not None and not is_valid_id(subid):
            raise ApiError("INVALID_ARGUMENT", f"invalid revision id {subid!r}")
        if match["verb"] is None and collection == ITEMS and subid is not None and method == "GET":
            return JSONResponse(self.revisions.get_item_revision(owner, subid))
        if match["verb"] is not None or collection != SETS:
            raise ApiError("NOT_FOUND", f"no such method: {method} {request.url.path}")
        if subid is None and method == "POST":
            body = await self._json_body(request)
            request_id = request.headers.get(REQUEST_ID_HEADER)
            return JSONResponse(self.revisions.create(owner, body, match["version"], request_id))
        if subid is None and method == "GET":
            token = request.query_params.get("pageToken") or request.query_params.get("page_token")
            return _json_text(self.revisions.list_json(owner, _page_size(request), token))
        if subid is not None and method == "GET":
            return JSONResponse(self.revisions.get(owner, subid))
        if subid is not None and method == "DELETE":
            return JSONResponse(self.revisions.delete(owner, subid, match["version"]))
        raise ApiError("NOT_FOUND", f"no such method: {method} {request.url.path}")


def _operation_token(token: str, parent: str) -> str:
    try:
        name = base64.urlsafe_b64decode(token.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        name = ""
    if not name.startswith(f"{parent}/"):
        raise ApiError("INVALID_ARGUMENT", "pageToken: not a page token of this listing")
    return name


_MODELS: dict[str, type[WireModel]] = {
    ITEMS: EvaluationItem,
    SETS: EvaluationSet,
    RUNS: EvaluationRun,
    METRICS: EvaluationMetric,
}


def check_v1_body(version: str, collection: str, body: Any) -> None:
    """A v1 request that sets a field only v1beta1 has is refused, naming the field."""
    model = _MODELS.get(collection)
    if version != "v1" or model is None or not isinstance(body, dict):
        return
    try:
        parsed = model.model_validate(body)
    except ValueError:
        return  # the create itself says what is wrong with it
    found = next(v1beta1_only(parsed), None)
    if found is not None:
        raise ApiError("INVALID_ARGUMENT", f"{found}: not a field of the v1 API (v1beta1 has it)")


def _as_v1(collection: str, response: Response) -> Response:
    """A v1 answer: the resource (or each listed one) without fields only v1beta1 has."""
    if collection not in (ITEMS, SETS, RUNS):
        return response
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


def _created(resource: dict[str, Any]) -> Response:
    """A created resource: its stored JSON text when it has it, encoded otherwise."""
    if isinstance(resource, StoredJson):
        return _json_text(resource.text)
    return JSONResponse(resource)
