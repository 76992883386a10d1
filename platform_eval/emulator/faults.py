"""Fault injection: make the next matching requests fail, stall or lose their connection.

Faults are registered through ``POST /_emulator/faults`` (or ``Emulator.inject_fault``) and
used up in order. ``GET /_emulator/faults`` shows what is left, so a test can assert that every
fault it registered was actually hit.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import asdict, dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._asgi import send_rpc_error

KINDS = ("status", "drop", "status_after", "drop_after", "delay", "unfinished")


@dataclass
class Fault:
    """``kind``: ``status`` answers with ``status`` without processing the request;
    ``drop`` closes the connection without processing; ``status_after`` and ``drop_after``
    process the request first (so a create is stored) and then fail or drop the answer;
    ``delay`` only waits ``delay`` seconds, then serves the request normally;
    ``unfinished`` processes the request and answers the operation it returns as not done
    (its name and metadata, no result): an operation that never finishes."""

    path: str = ""
    method: str = "*"
    kind: str = "status"
    status: int = 503
    times: int = 1
    retry_after: str | None = None
    delay: float = 0.0

    def matches(self, method: str, path: str) -> bool:
        return (self.method in ("*", method)) and self.path in path

    @classmethod
    def from_json(cls, data: Any) -> Fault:
        """A fault from its JSON description; ValueError naming the field that is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"a fault is a JSON object, not {type(data).__name__}")
        allowed = set(cls.__dataclass_fields__) | {"retryAfter"}
        unknown = set(data) - allowed
        if unknown:
            raise ValueError(f"unknown fault fields {sorted(unknown)}; allowed {sorted(allowed)}")
        data = dict(data)
        if "retryAfter" in data:
            data["retry_after"] = data.pop("retryAfter")
        for name, kinds in _FIELD_TYPES.items():
            value = data.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
                raise ValueError(f"fault field {name!r} has the wrong type: {value!r}")
        if data.get("retry_after") is not None:
            data["retry_after"] = str(data["retry_after"])
        fault = cls(**data)
        if fault.kind not in KINDS:
            raise ValueError(f"fault kind must be one of {KINDS}")
        if not 1 <= fault.times <= 1_000_000:
            raise ValueError("fault times must be between 1 and 1000000")
        if not 400 <= fault.status <= 599:
            raise ValueError("fault status must be an HTTP error status (400-599)")
        if not 0 <= fault.delay <= MAX_DELAY:
            raise ValueError(f"fault delay must be between 0 and {MAX_DELAY} seconds")
        fault.method = fault.method.upper()
        return fault


#: Longer delays would only hold server connections for nothing.
MAX_DELAY = 300.0
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "path": (str,),
    "method": (str,),
    "kind": (str,),
    "status": (int,),
    "times": (int,),
    "retry_after": (str, int, float),
    "delay": (int, float),
}


class DroppedConnectionError(Exception):
    """Raised inside the server to make it close the connection mid-response."""


class FaultRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            return [asdict(f) for f in self._faults]

    def take(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path):
                    fault.times -= 1
                    if fault.times == 0:
                        self._faults.remove(fault)
                    return fault
        return None


_RPC_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


async def _send_status(send: Send, fault: Fault) -> None:
    headers = [] if fault.retry_after is None else [(b"retry-after", fault.retry_after.encode())]
    status_name = _RPC_STATUS.get(fault.status, "UNKNOWN")
    await send_rpc_error(send, fault.status, status_name, "injected fault", headers)


async def _drop(send: Send) -> None:
    # Promise a body and never send it: the server closes the connection and the client sees
    # an incomplete response, as with a dropped connection.
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"4096")]}
    )
    raise DroppedConnectionError


async def _unfinished(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    start: Message = {}
    body = bytearray()

    async def keep(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            start = message
        elif message["type"] == "http.response.body":
            body.extend(message.get("body", b""))

    await app(scope, receive, keep)
    try:
        answer = json.loads(bytes(body))
    except ValueError:
        answer = None
    if start.get("status") != 200 or not isinstance(answer, dict) or "name" not in answer:
        # Not an operation: answered as it was.
        await send(start)
        await send({"type": "http.response.body", "body": bytes(body)})
        return
    pending = {key: answer[key] for key in ("name", "metadata") if key in answer}
    payload = json.dumps(pending).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class FaultMiddleware:
    def __init__(self, app: ASGIApp, registry: FaultRegistry) -> None:
        self.app = app
        self.registry = registry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith("/_emulator"):
            await self.app(scope, receive, send)
            return
        fault = self.registry.take(scope["method"], path)
        if fault is None:
            await self.app(scope, receive, send)
            return
        if fault.delay:
            await asyncio.sleep(fault.delay)
        if fault.kind == "delay":
            await self.app(scope, receive, send)
            return
        if fault.kind == "unfinished":
            await _unfinished(self.app, scope, receive, send)
            return
        if fault.kind in ("status_after", "drop_after"):

            async def swallow(message: Message) -> None:
                return None

            await self.app(scope, receive, swallow)
        if fault.kind in ("status", "status_after"):
            await _send_status(send, fault)
        else:
            await _drop(send)
