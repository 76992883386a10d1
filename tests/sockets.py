"""Sockets in the tests: raw ones against the emulator (its connection limits), and the small
HTTP servers tests stand up beside it."""

from __future__ import annotations

import http.server
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: How often a test's server looks whether it was shut down: socketserver's own half second
#: is what every shutdown would wait (a fake model torn down after each test).
_SHUTDOWN_POLL = 0.01


def serve_in_thread(server: socketserver.BaseServer, name: str = "test-server") -> threading.Thread:
    """Serves ``server`` in a daemon thread until ``server.shutdown()``, which returns at once."""
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": _SHUTDOWN_POLL},
        name=name,
        daemon=True,
    )
    thread.start()
    return thread


@contextmanager
def answering(status: int, content_type: str, body: bytes) -> Iterator[str]:
    """A local HTTP server that answers every GET with this response, serving until the block
    ends; yields its ``host:port``."""

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer) as server:
        serve_in_thread(server)
        try:
            yield f"127.0.0.1:{server.server_port}"
        finally:
            server.shutdown()


def closed(sock: socket.socket) -> bool:
    """True when the server closed ``sock`` (waiting up to 3 s to see it); a reset is not a
    close the server chose."""
    sock.settimeout(3)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, TimeoutError):
        return False


def until(condition: Callable[[], Any], timeout: float = 60.0, what: str = "") -> None:
    """Waits for ``condition`` to hold, looking every 10 ms; fails after ``timeout`` seconds (a
    bound for a hang, not a measure: a busy machine is slow, and a test waits for it)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what or "the condition never held"
        time.sleep(0.01)
