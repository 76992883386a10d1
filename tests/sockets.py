"""Raw sockets against the emulator, for the tests of its connection limits."""

from __future__ import annotations

import socket


def closed(sock: socket.socket) -> bool:
    """True when the server closed ``sock`` (waiting up to 3 s to see it); a reset is not a
    close the server chose."""
    sock.settimeout(3)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, TimeoutError):
        return False
