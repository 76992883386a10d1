"""Connections the emulator's HTTP server keeps, bounded: no client holds it by doing nothing.

uvicorn closes an idle keep-alive connection after a response, but a connection that never
sends a request is kept for good: enough of them exhaust the process's file descriptors, and
then the health check cannot connect. Here a connection must send its first request within
``Limits.first_request_seconds``, and beyond ``Limits.connections`` open at once a new one is
closed straight away (a client's retry then finds room once idle ones are gone).
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


class BoundedHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """uvicorn's HTTP protocol, with a deadline for the first request and a connection cap."""

    #: Set on the subclass ``protocol_options`` makes for one emulator.
    limits: ClassVar[Limits]

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        cap = self.limits.connections
        if len(self.connections) > cap:
            _TOO_MANY.warning(
                f"more than {cap} connections open: new ones are closed until idle ones go "
                "(emulator start --max-connections)"
            )
            transport.close()
            return
        # The keep-alive timer uvicorn cancels when data arrives: armed from the start.
        self.timeout_keep_alive_task = self.loop.call_later(
            self.limits.first_request_seconds, self.timeout_keep_alive_handler
        )


def protocol_options(limits: Limits) -> dict[str, Any]:
    """uvicorn.Config arguments for the protocol bounded by ``limits`` (uvicorn builds one
    protocol object per connection from the class, so the limits ride on a subclass)."""
    bounded = type("BoundedHTTPProtocol", (BoundedHTTPProtocol,), {"limits": limits})
    return {"http": bounded}
