"""Connections that never send a request are closed, and beyond the cap new ones are closed at
once: idle sockets cannot exhaust the emulator's file descriptors or starve its health check."""

from __future__ import annotations

import contextlib
import socket
import time

import httpx
import pytest
from sockets import closed, until

from platform_eval.emulator import Emulator


def _idle(emulator: Emulator, count: int) -> list[socket.socket]:
    host, port = emulator.host_port.rsplit(":", 1)
    return [socket.create_connection((host, int(port))) for _ in range(count)]


def _gone(sock: socket.socket) -> bool:
    """Whether the server closed ``sock``, without waiting."""
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_a_connection_that_sends_nothing_isclosed() -> None:
    with Emulator(first_request_seconds=0.5) as emulator:
        idle = _idle(emulator, 20)
        time.sleep(0.8)
        assert all(closed(sock) for sock in idle)
        assert httpx.get(f"{emulator.url}/_emulator/health").status_code == 200


def test_beyond_the_cap_the_longest_idle_connections_give_way() -> None:
    with Emulator(max_connections=30) as emulator:
        idle = _idle(emulator, 40)
        until(lambda: all(closed(sock) for sock in idle[:10]))  # the ten opened first
        for sock in idle[:30]:
            sock.close()
        assert httpx.get(f"{emulator.url}/_emulator/health").status_code == 200


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
def test_a_request_head_sent_a_byte_at_a_time_is_cut_off() -> None:
    # A slowloris client: every byte arrives in time to keep the connection busy, the head never
    # completes. Before, it held its connection for as long as it kept sending.
    with Emulator(first_request_seconds=0.5) as emulator:
        host, port = emulator.host_port.rsplit(":", 1)
        slow = socket.create_connection((host, int(port)))
        head = b"GET /_emulator/health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
        started, cut = time.monotonic(), False
        for byte in head:
            try:
                slow.send(bytes([byte]))
            except OSError:
                cut = True
                break
            time.sleep(0.05)
        assert cut or closed(slow)
        # Cut at 0.5 s; the whole head takes 7 s to send: a margin no busy machine uses up.
        assert time.monotonic() - started < 6
        # A client that sends its requests whole is served, again and again, on one connection.
        with httpx.Client() as client:
            for _ in range(3):
                assert client.get(f"{emulator.url}/_emulator/health").status_code == 200
                time.sleep(0.3)


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
def test_idle_sockets_that_reconnect_at_once_do_not_keep_the_health_check_out() -> None:
    """30 idle sockets at a cap of 30, each opened again as soon as it is closed: a client
    with a request to make still gets in, the longest idle socket giving way to it."""
    import threading

    with Emulator(max_connections=30) as emulator:
        host, port = emulator.host_port.rsplit(":", 1)
        stop = threading.Event()
        sockets = _idle(emulator, 30)

        def reconnect() -> None:
            while not stop.is_set():
                for index, sock in enumerate(sockets):
                    if _gone(sock):
                        sock.close()
                        with contextlib.suppress(OSError):
                            sockets[index] = socket.create_connection((host, int(port)))
                time.sleep(0.005)

        attacker = threading.Thread(target=reconnect, daemon=True)
        attacker.start()
        try:
            answered = 0
            for _ in range(20):
                try:
                    response = httpx.get(f"{emulator.url}/_emulator/health", timeout=5)
                    answered += response.status_code == 200
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
        finally:
            stop.set()
            attacker.join(timeout=5)
            for sock in sockets:
                sock.close()
    assert answered == 20
