"""The run executor outlives any error of one run (attack probe, High 2).

A full disk during a run used to kill the executor thread: once space was freed every new run
stayed PENDING and ``platform-eval run`` waited until killed. The disk is filled for real here:
SQLite's ``max_page_count`` caps the database, and a write past it fails with SQLite's own
"database or disk is full", exactly as on a full file system.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from factories import agent_data, reply, request_item, user

from platform_eval import Client
from platform_eval.emulator import Emulator
from platform_eval.emulator.store import Store

SAID = agent_data([user("hi"), reply("hello there")])


def _fill(store: Store) -> None:
    """The database can grow no more, and the page holding the newest resources (a running
    run among them) has no room left: tiny rows appended to the table until SQLite refuses."""
    with store._lock:
        db = store._db
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        db.execute(f"PRAGMA max_page_count={pages + 1}")
        number = 0
        try:
            for number in range(1_000_000):
                db.execute(
                    "INSERT INTO resources (parent, collection, rid, body) VALUES (?,?,?,?)",
                    ("filler", "filler", str(number), "{}"),
                )
        except sqlite3.OperationalError as full:
            assert "full" in str(full)
        # An insert stops when an index has no room; the table's newest leaves may still have
        # some, which an update of a row there could use: the newest rows grow until none has.
        for size in (1024, 256, 64, 16, 4, 1):
            for rid in range(number - 1, max(-1, number - 200), -1):
                with contextlib.suppress(sqlite3.OperationalError):
                    db.execute(
                        "UPDATE resources SET body = body || ? WHERE parent='filler' AND rid=?",
                        (" " * size, str(rid)),
                    )


def _free(store: Store) -> None:
    with store._lock:
        store._db.execute("PRAGMA max_page_count=1073741823")
        store._db.execute("DELETE FROM resources WHERE parent='filler'")


def _health(emulator: Emulator) -> httpx.Response:
    return httpx.get(f"{emulator.url}/_emulator/health", timeout=10)


def _wait_for(condition: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[Emulator, Client]]:
    with Emulator(db=str(tmp_path / "emulator.sqlite")) as emulator, emulator.client("p") as c:
        yield emulator, c


def _set(client: Client) -> Any:
    items = [
        client.create_item(
            request_item(
                f"case {i}",
                prompt=None,
                golden={"text": "hello there"},
                candidates=[{"candidate": "agent", "agentData": SAID}],
            )
        )
        for i in range(3)
    ]
    return client.create_set(display_name="golden", items=items)


def test_a_full_disk_fails_that_run_and_later_runs_succeed(
    running: tuple[Emulator, Client],
) -> None:
    emulator, client = running
    golden = _set(client)
    with emulator.executor.paused():
        run = client.create_run(evaluation_set=golden, metrics=["exact_match"])
        assert emulator.executor.wait_until_held()
        _fill(emulator.store)
    # The run meets the full disk, and so does the record of its failure: the health check
    # says so, with the database's own words.
    _wait_for(lambda: _health(emulator).status_code == 503)
    health = _health(emulator).json()
    assert health["status"] == "degraded"
    assert health["executor"]["state"] == "degraded"
    assert "database or disk is full" in health["executor"]["error"]
    assert health["executor"]["unrecordedRuns"] == [run.name]

    _free(emulator.store)
    failed = client.wait_for_run(run, timeout=30, poll_interval=0.05)
    assert failed.state == "FAILED"
    assert "database or disk is full" in failed.error.message
    assert _health(emulator).json() == {"status": "ok", "executor": {"state": "running"}}

    after = client.wait_for_run(
        client.create_run(evaluation_set=golden, metrics=["exact_match"]),
        timeout=30,
        poll_interval=0.05,
    )
    assert after.state == "SUCCEEDED"
    assert after.evaluation_results.summary_metrics.total_items == 3


def test_a_request_meeting_a_full_disk_is_a_503_in_the_databases_words(
    running: tuple[Emulator, Client],
) -> None:
    emulator, _ = running
    _fill(emulator.store)
    base = f"{emulator.url}/v1beta1/projects/p/locations/us-central1"
    refused = httpx.post(
        f"{base}/evaluationExperiments", json={"displayName": "x" * 5000}, timeout=10
    )
    assert refused.status_code == 503
    assert "database or disk is full" in refused.json()["error"]["message"]
    _free(emulator.store)
    assert httpx.post(f"{base}/evaluationExperiments", json={"displayName": "x"}).status_code == 200


def test_a_metric_that_raises_fails_its_run_and_the_next_run_succeeds(
    running: tuple[Emulator, Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator, client = running
    golden = _set(client)
    from platform_eval import metrics

    real = metrics.evaluate_stored_request

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a metric's bug")

    # The executor scores a stored item's JSON (evaluate_stored_request).
    monkeypatch.setattr(metrics, "evaluate_stored_request", broken)
    first = client.wait_for_run(
        client.create_run(evaluation_set=golden, metrics=["exact_match"]), timeout=30
    )
    assert first.state == "FAILED" and "ZeroDivisionError: a metric's bug" in first.error.message
    monkeypatch.setattr(metrics, "evaluate_stored_request", real)
    second = client.wait_for_run(
        client.create_run(evaluation_set=golden, metrics=["exact_match"]), timeout=30
    )
    assert second.state == "SUCCEEDED"
    assert _health(emulator).status_code == 200


def test_the_health_check_says_when_no_executor_runs(running: tuple[Emulator, Client]) -> None:
    emulator, _ = running
    emulator.executor.stop()
    stopped = _health(emulator)
    assert stopped.status_code == 503
    assert stopped.json() == {"status": "degraded", "executor": {"state": "stopped"}}
