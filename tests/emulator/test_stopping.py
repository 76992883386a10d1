"""Stopping the emulator's HTTP server (``http_server.PromptServer``): at once when nothing is
open, as every command on the embedded emulator does; a request under way still gets its
answer."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from platform_eval.emulator import Emulator


def test_a_stopped_emulator_has_ended_its_thread_and_refuses_connections() -> None:
    emulator = Emulator().start()
    thread = emulator._thread
    assert thread is not None
    with httpx.Client() as client:
        assert client.get(emulator.url + "/_emulator/health").status_code == 200
    url = emulator.url
    emulator.close()
    assert not thread.is_alive()
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/_emulator/health")


def test_a_request_under_way_when_the_emulator_stops_still_gets_its_answer() -> None:
    emulator = Emulator().start()
    emulator.inject_fault(path="/_emulator/health", kind="delay", delay=0.5)
    with httpx.Client() as client, ThreadPoolExecutor(1) as pool:
        answer = pool.submit(client.get, emulator.url + "/_emulator/health")
        # The fault is taken when the request reaches the server: it is under way then.
        while emulator.faults.pending() and not answer.done():
            time.sleep(0.01)
        emulator.close()
        assert answer.result(timeout=10).status_code == 200
