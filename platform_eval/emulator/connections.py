"""Connections the emulator's HTTP server keeps, bounded: no client holds it by doing nothing.

uvicorn closes an idle keep-alive connection after a response, but a connection that never
sends a request is kept for good: enough of them exhaust the process's file descriptors, and
then the health check cannot connect; and a client sending a request's head a byte at a time
holds its connection as long as it likes. Here a connection must send its first request within
``Limits.first_request_seconds``, the head of each request must be complete that long after its
first byte, and beyond ``Limits.connections`` open at once the connection idle the longest (no
request under way) is closed to make room for the new one; only when every connection is serving
a request is the new one closed straight away. Idle sockets that reconnect as soon as they are
closed then cannot keep a client with a request to make (the health check) out.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, ClassVar

from uvicorn.protocols.http.auto import AutoHTTPProtocol

from .limits import Limits

_logger = logging.getLogger("platform_eval.emulator")


class _RateLimitedLog:
    """One warning per ``every`` seconds at most, with how many were not printed."""

    def __init__(self, every: float = 10.0) -> None:
        self.every = every
        self.last = 0.0
        self.suppressed = 0

    def warning(self, message: str) -> None:
        now = time.monotonic()
        if now - self.last < self.every:
            self.suppressed += 1
            return
        more = f" ({self.suppressed} more like it not logged)" if self.suppressed else ""
        self.last, self.suppressed = now, 0
        _logger.warning("%s%s", message, more)


_TOO_MANY = _RateLimitedLog()
_SLOW_HEAD = _RateLimitedLog()


class BoundedHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """uvicorn's HTTP protocol, with deadlines for the first request and for each request's
    head, and a connection cap."""

    #: Set on the subclass ``protocol_options`` makes for one emulator.
    limits: ClassVar[Limits]
    _head_deadline: asyncio.TimerHandle | None = None

    #: When the connection last received bytes (or was made): who has been idle the longest.
    _last_active: float = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        self._last_active = self.loop.time()
        cap = self.limits.connections
        if len(self.connections) > cap:
            idle = self._longest_idle()
            if idle is None:
                _TOO_MANY.warning(
                    f"more than {cap} connections open, each serving a request: new ones are "
                    "closed until one is done (emulator start --max-connections)"
                )
                transport.close()
                return
            _TOO_MANY.warning(
                f"more than {cap} connections open: the longest idle ones are closed to make "
                "room (emulator start --max-connections)"
            )
            idle.transport.close()
        # The keep-alive timer uvicorn cancels when data arrives: armed from the start.
        self.timeout_keep_alive_task = self.loop.call_later(
            self.limits.first_request_seconds, self.timeout_keep_alive_handler
        )

    def _between_requests(self) -> bool:
        return self.cycle is None or bool(self.cycle.response_complete)

    def _idle(self) -> bool:
        """No request under way, none being received, and not already closing."""
        return (
            self._between_requests()
            and self._head_deadline is None
            and not self.transport.is_closing()
        )

    def _longest_idle(self) -> BoundedHTTPProtocol | None:
        others = (
            c for c in self.connections if c is not self and isinstance(c, BoundedHTTPProtocol)
        )
        idle = [c for c in others if c._idle()]
        return min(idle, key=lambda c: c._last_active) if idle else None

    def data_received(self, data: bytes) -> None:
        self._last_active = self.loop.time()
        # Bytes between requests begin a request's head: it must be whole in time.
        if self._head_deadline is None and self._between_requests():
            self._head_deadline = self.loop.call_later(
                self.limits.first_request_seconds, self._head_too_slow
            )
        super().data_received(data)
        if self._head_deadline is not None and not self._between_requests():
            self._head_deadline.cancel()  # the head is in: a request is being served
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if self._between_requests() and not self.transport.is_closing():
            _SLOW_HEAD.warning(
                f"a request's head took more than {self.limits.first_request_seconds:g} s: its "
                "connection is closed (emulator start --first-request-seconds)"
            )
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None
        super().connection_lost(exc)


def protocol_options(limits: Limits) -> dict[str, Any]:
    """uvicorn.Config arguments for the protocol bounded by ``limits`` (uvicorn builds one
    protocol object per connection from the class, so the limits ride on a subclass)."""
    bounded = type("BoundedHTTPProtocol", (BoundedHTTPProtocol,), {"limits": limits})
    return {"http": bounded}
