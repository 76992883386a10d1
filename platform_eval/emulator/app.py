"""The emulator's HTTP application: the API (``api``), Cloud Storage, OTLP and the control
endpoints under ``/_emulator``, behind fault injection and the optional token check."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from ..metrics import DEFAULT_JUDGES, Judges
from ._asgi import error_response
from .access import RequireToken
from .api import API
from .backend import ApiError, Backend
from .bodies import parse_json, read_body
from .faults import Fault, FaultMiddleware, FaultRegistry
from .gcs import GcsRoutes, ObjectStore
from .imports import SetImporter
from .location_methods import LocationMethods
from .openapi import openapi_document
from .otlp import OtlpRoutes
from .revisions import Revisions
from .store import failure as store_failure


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


class EmulatorApp:
    def __init__(
        self,
        backend: Backend,
        faults: FaultRegistry,
        objects: ObjectStore,
        *,
        auth_token: str | None = None,
        executor_health: Callable[[], dict[str, Any]] = lambda: {"state": "running"},
        judges: Judges = DEFAULT_JUDGES,
    ) -> None:
        self.backend = backend
        self.judges = judges
        self.executor_health = executor_health
        self.faults = faults
        self.limits = objects.limits
        self.api = API(
            backend,
            Revisions(backend, objects),
            SetImporter(backend, objects),
            self.limits,
            LocationMethods(backend, judges, self.limits, objects),
        )
        routes = [
            Route("/_emulator/health", self.health, methods=["GET"]),
            Route("/_emulator/openapi.json", self.openapi, methods=["GET"]),
            Route("/_emulator/reset", self.reset, methods=["POST"]),
            Route("/_emulator/progress/{name:path}", self.progress, methods=["GET"]),
            Route("/_emulator/judge-usage/{name:path}", self.judge_usage, methods=["GET"]),
            Route("/_emulator/faults", self.fault_control, methods=["GET", "POST", "DELETE"]),
            Route("/_emulator/computable", self.computable, methods=["POST"]),
            *GcsRoutes(objects).routes(),
            *OtlpRoutes(backend.store, self.limits).routes(),
            Route("/{path:path}", self.api.serve, methods=["GET", "POST", "PATCH", "DELETE"]),
        ]
        # A bug must still answer in the API's error shape (the traceback goes to the log).
        handlers: dict[Any, Any] = {
            Exception: _internal_error,
            HTTPException: _http_error,
            # Handled where it is raised, not re-raised to the log as a bug is: a full disk or
            # a file-size limit is the machine's state, said in the answer, not 100 tracebacks.
            sqlite3.Error: _internal_error,
        }
        app = Starlette(routes=routes, exception_handlers=handlers)
        self.asgi: ASGIApp = FaultMiddleware(app, faults)
        if auth_token:
            self.asgi = RequireToken(self.asgi, auth_token)

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

    async def judge_usage(self, request: Request) -> Response:
        """What judging a run cost, as the emulator's model judge counted it: the API has no
        field for it, so the emulator serves it here."""
        name = request.path_params["name"]
        found = self.backend.store.judge_usage(name)
        if found is None:
            return error_response(ApiError("NOT_FOUND", f"no judge usage recorded for {name}"))
        return JSONResponse(found)

    async def computable(self, request: Request) -> Response:
        """Which metrics the emulator's engine, with its judges, cannot compute, and why:
        asked before anything is uploaded (``{"metrics": [...], "rubricTypes": [...]}``, the
        types of the rubrics the eval set carries where known) -> ``{"refused": [...]}``."""
        from pydantic import ValidationError

        from ..metrics.computable import refusals
        from ..types import EvaluationRunMetric

        try:
            body = parse_json(await read_body(request, self.limits.body_bytes), limits=self.limits)
            given = body.get("metrics") if isinstance(body, dict) else None
            types = body.get("rubricTypes") if isinstance(body, dict) else None
            if not isinstance(given, list) or not (types is None or isinstance(types, list)):
                raise ValueError('expected {"metrics": [metric, ...], "rubricTypes": [...]}')
            metrics = []
            for index, raw in enumerate(given):
                try:
                    metrics.append(EvaluationRunMetric.model_validate(raw))
                except ValidationError as exc:
                    raise ValueError(f"metrics[{index}]: {exc.errors()[0]['msg']}") from None
        except ApiError as exc:
            return error_response(exc)
        except ValueError as exc:
            return error_response(ApiError("INVALID_ARGUMENT", str(exc)))
        rubric_types = None if types is None else [str(t) if t else None for t in types]
        refused = refusals(metrics, self.judges, rubric_types)
        return JSONResponse({"refused": [r.to_json() for r in refused]})

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
            body = parse_json(await read_body(request, self.limits.body_bytes), limits=self.limits)
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
