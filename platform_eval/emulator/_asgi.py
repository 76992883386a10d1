"""The emulator's google.rpc error answers: as a Response for routes, and from raw ASGI
middleware (faults, the auth check), where no Response exists yet."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Send

from .backend import ApiError


def error_response(error: ApiError) -> JSONResponse:
    """The error as a route answers it: its google.rpc body with its HTTP status."""
    return JSONResponse(error.body(), status_code=error.http_status)


async def send_rpc_error(
    send: Send,
    code: int,
    status: str,
    message: str,
    headers: Sequence[tuple[bytes, bytes]] = (),
    details: Sequence[dict[str, Any]] = (),
) -> None:
    """A google.rpc error body with HTTP status ``code``, as every emulator route answers."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = list(details)
    body = json.dumps({"error": error}).encode()
    start_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *headers,
    ]
    await send({"type": "http.response.start", "status": code, "headers": start_headers})
    await send({"type": "http.response.body", "body": body})
