"""An OTLP/HTTP receiver: agents export their spans and log records straight into the emulator.

``POST /v1/traces`` and ``POST /v1/logs`` take what an OpenTelemetry OTLP/HTTP exporter sends
(``application/x-protobuf``, its default, or ``application/json``; gzip or not), so a user sets
``OTEL_EXPORTER_OTLP_ENDPOINT`` to the emulator's URL and runs their agent. Every export is kept
as OTLP JSON; ``GET /_emulator/otlp`` answers with the list of them (a file of that list is an
OTLP JSON trace file like any other) and ``DELETE /_emulator/otlp`` forgets them.

An export we cannot read is refused with 400 and says why, as an OTLP receiver does, instead of
being kept and failing later when the traces are evaluated.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..formats._problems import FormatError
from ..traces.containers import otlp_json_from_protobuf, records_from_data
from ._asgi import error_response
from .backend import ApiError
from .bodies import parse_json_object, read_body
from .limits import Limits
from .store import Store

PROTOBUF = "application/x-protobuf"

#: The OTLP JSON key of each signal's export.
_SIGNAL_KEYS = {"traces": "resourceSpans", "logs": "resourceLogs"}


def _decompressed(body: bytes, encoding: str, limit: int) -> bytes:
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise ApiError("INVALID_ARGUMENT", f"Content-Encoding {encoding!r} is not supported")
    # Bounded, so that a small compressed body cannot inflate past the size limit.
    inflater = zlib.decompressobj(zlib.MAX_WBITS | (16 if encoding == "gzip" else 0))
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise ApiError("INVALID_ARGUMENT", f"the {encoding} body is corrupt: {exc}") from None
    if len(data) > limit:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"the decompressed body is larger than the emulator's limit of {limit} bytes",
        )
    return data


class TelemetryStore:
    """The exports received, in order, as OTLP JSON objects."""

    def __init__(self, store: Store, limit: int) -> None:
        self.store = store
        self.limit = limit

    def add(self, signal: str, export: dict[str, Any]) -> None:
        body = json.dumps(export, separators=(",", ":"), ensure_ascii=False)
        with self.store.transaction() as db:
            (kept,) = db.execute("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM telemetry").fetchone()
            if kept + len(body) > self.limit:
                raise ApiError(
                    "RESOURCE_EXHAUSTED",
                    f"the emulator keeps {kept:,} bytes of OTLP exports and this one is "
                    f"{len(body):,}: past its limit of {self.limit:,} (emulator start "
                    "--max-telemetry-mb); read them (GET /_emulator/otlp, --traces emulator:) "
                    "and clear them (DELETE /_emulator/otlp)",
                )
            db.execute("INSERT INTO telemetry (signal, body) VALUES (?, ?)", (signal, body))

    def exports_json(self) -> str:
        """The exports as one JSON list, from the JSON they are kept as, not decoded again."""
        with self.store.transaction() as db:
            rows = db.execute("SELECT body FROM telemetry ORDER BY seq").fetchall()
        return "[" + ",".join(body for (body,) in rows) + "]"

    def clear(self) -> None:
        with self.store.transaction() as db:
            db.execute("DELETE FROM telemetry")


class OtlpRoutes:
    def __init__(self, store: Store, limits: Limits) -> None:
        self.telemetry = TelemetryStore(store, limits.telemetry_bytes)
        self.limits = limits

    def routes(self) -> list[Route]:
        return [
            Route("/v1/traces", self.traces, methods=["POST"]),
            Route("/v1/logs", self.logs, methods=["POST"]),
            Route("/_emulator/otlp", self.recorded, methods=["GET", "DELETE"]),
        ]

    async def traces(self, request: Request) -> Response:
        return await self._receive(request, "traces")

    async def logs(self, request: Request) -> Response:
        return await self._receive(request, "logs")

    async def recorded(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.telemetry.clear()
            return JSONResponse({})
        return Response(self.telemetry.exports_json(), media_type="application/json")

    async def _receive(self, request: Request, signal: str) -> Response:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        try:
            body = _decompressed(
                await read_body(request, self.limits.body_bytes),
                request.headers.get("content-encoding", "").strip().lower(),
                self.limits.body_bytes,
            )
            export = self._export(body, content_type, signal)
        except ApiError as error:
            return error_response(error)
        if export:  # an empty export is valid and holds nothing
            try:
                self.telemetry.add(signal, export)
            except ApiError as error:
                return error_response(error)
        if content_type == PROTOBUF:
            # An empty Export*ServiceResponse: all accepted.
            return Response(b"", media_type=PROTOBUF)
        return JSONResponse({})

    def _export(self, body: bytes, content_type: str, signal: str) -> dict[str, Any]:
        where = f"POST /v1/{signal}"
        try:
            if content_type == PROTOBUF:
                export = otlp_json_from_protobuf(body, where, logs=signal == "logs")
            elif content_type in ("application/json", ""):
                export = parse_json_object(body, limits=self.limits)
            else:
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"Content-Type {content_type!r}: OTLP/HTTP sends {PROTOBUF} or "
                    "application/json",
                )
            other = _SIGNAL_KEYS["logs" if signal == "traces" else "traces"]
            if other in export:
                raise ApiError("INVALID_ARGUMENT", f"{other} belong in another endpoint")
            records_from_data(export, where)  # refused now, not when the traces are read
        except FormatError as exc:
            raise ApiError("INVALID_ARGUMENT", f"not an OTLP {signal} export: {exc}") from None
        return export
