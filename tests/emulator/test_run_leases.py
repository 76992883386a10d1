"""One executor per run, however many processes share the database (attack probe, issue 27
Medium 4): two emulators on one file used to both execute a run (17 results for 10 items),
and a cancel through one was ignored by the other."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_emulator_http import _thousand_items

from platform_eval import Client
from platform_eval.emulator import Emulator, runner


def _wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


def _results_of(client: object, run_name: str) -> list[object]:
    filter_ = f'evaluation_run = "{run_name}" AND evaluation_item_type = RESULT'
    return list(client.list_items(filter=filter_, page_size=1000))  # type: ignore[attr-defined]


def _held_run(emulator: Emulator, client: Client) -> str:
    """A run of 10 items started on ``emulator`` and held by its executor (call it inside
    ``emulator.executor.paused(...)``); its name."""
    evaluation_set = _thousand_items(client, 10)
    run = client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
    assert emulator.executor.wait_until_held()
    assert run.name is not None
    return run.name


def test_two_emulators_on_one_database_execute_a_run_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "HEARTBEAT_INTERVAL", 0.05)
    db = str(tmp_path / "shared.sqlite")
    with Emulator(db=db) as first, first.client() as client:
        with first.executor.paused(after_items=2):
            run = _held_run(first, client)
            # A second emulator on the same file finds the unfinished run and leaves it to the
            # first, which holds its lease.
            with Emulator(db=db) as second:
                _wait_for(lambda: run in second.executor._deferred)
                assert run not in second.executor._held
        done = client.wait_for_run(run, timeout=30, poll_interval=0.02)
        assert done.state == "SUCCEEDED"
        assert len(_results_of(client, run)) == 10


def test_a_cancel_through_one_emulator_reaches_the_one_that_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "HEARTBEAT_INTERVAL", 0.05)
    db = str(tmp_path / "shared.sqlite")
    with Emulator(db=db) as first, first.client() as client:
        with first.executor.paused(after_items=2):
            run = _held_run(first, client)
            with Emulator(db=db) as second, second.client() as other:
                other.cancel_run(run)
                # The first emulator's lease heartbeat reads the cancel from the database.
                _wait_for(lambda: run in first.backend.cancel_requested)
        done = client.wait_for_run(run, timeout=30, poll_interval=0.02)
        assert done.state == "CANCELLED"
        assert len(_results_of(client, run)) == 2


def test_a_run_whose_executor_died_is_taken_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "shared.sqlite")
    first = Emulator(db=db).start()
    with first.client() as client:
        with first.executor.paused(after_items=3):
            run = _held_run(first, client)
            # The first emulator "dies": its lease is neither renewed nor released.
            first.executor._heartbeat_stop.set()
            first.executor._held.clear()
            first.executor._release = lambda name: None  # type: ignore[method-assign]
            monkeypatch.setattr(runner, "LEASE_STALE_AFTER", 0.3)
            with Emulator(db=db) as second, second.client() as other:
                done = other.wait_for_run(run, timeout=30, poll_interval=0.02)
                assert done.state == "SUCCEEDED"
                # The 3 results written before the death are kept, none computed twice.
                assert len(_results_of(other, run)) == 10
        first.stop()
    first.store.close()
