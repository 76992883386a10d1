"""Sockets in the tests: raw ones against the emulator (its connection limits), and the small
HTTP servers tests stand up beside it."""

from __future__ import annotations

import socket
import socketserver
import threading

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


def closed(sock: socket.socket) -> bool:
    """True when the server closed ``sock`` (waiting up to 3 s to see it); a reset is not a
    close the server chose."""
    sock.settimeout(3)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, TimeoutError):
        return False
