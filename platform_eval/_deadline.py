"""A call's deadline down to every socket read of the synchronous client.

httpx's timeouts bound each read, not a call: a server that sends its headers a byte at a time
keeps a call going for as long as it likes. The async client stops an attempt with the event
loop (``asyncio.timeout``); a blocking read cannot be stopped from outside, so here each read
and write of our own connections waits at most what is left of the call's deadline, set for
the thread doing the call.

The network backend is httpcore's public interface; installing it reaches one private
attribute of httpx's transport (``_pool._network_backend``), checked: without it, reads are
bounded as httpx bounds them, and the body is still read to the deadline by the transport.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

from ._tls import default_context

_local = threading.local()


def _bounded(timeout: float | None) -> float | None:
    deadline: float | None = getattr(_local, "deadline", None)
    if deadline is None:
        return timeout
    left = max(deadline - time.monotonic(), 0.001)
    return left if timeout is None else min(timeout, left)


@contextmanager
def deadline_of(deadline: float) -> Iterator[None]:
    """Reads and writes of this thread's calls end by ``deadline`` (``time.monotonic()``)."""
    outer = getattr(_local, "deadline", None)
    _local.deadline = deadline
    try:
        yield
    finally:
        _local.deadline = outer


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _bounded(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(
            self._inner.connect_tcp(host, port, _bounded(timeout), local_address, socket_options)
        )

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _bounded(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bounded_transport() -> httpx.HTTPTransport:
    """httpx's own transport, its connections' reads and writes held to ``deadline_of``."""
    transport = httpx.HTTPTransport(verify=default_context())
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, httpcore.NetworkBackend):
        pool._network_backend = _Backend(backend)  # type: ignore[union-attr]
    return transport
