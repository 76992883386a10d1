"""``_gc``: the collector is held back only for our own work, and a program's own settings
survive it."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from platform_eval import _gc
from platform_eval._gc import HELD_THRESHOLD, collector_paused

STARTED: list[threading.Thread] = []


@pytest.fixture(autouse=True)
def _restore_collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    enabled, thresholds = gc.isenabled(), gc.get_threshold()
    # The threads alive are this one and those a test starts (other tests' servers may linger).
    STARTED.clear()
    monkeypatch.setattr(_gc, "_running_threads", lambda: [threading.current_thread(), *STARTED])
    yield
    gc.set_threshold(*thresholds)
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_the_hold_raises_the_threshold_and_puts_it_back() -> None:
    before = gc.get_threshold()
    with collector_paused():
        assert gc.get_threshold()[0] == HELD_THRESHOLD
        assert gc.get_threshold()[1:] == before[1:]
        assert gc.isenabled()  # never disabled: only the threshold moves
    assert gc.get_threshold() == before


def test_a_programs_own_gc_disable_is_never_undone() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()
    gc.enable()
    with collector_paused():
        gc.disable()  # the program turns it off while we hold it
    assert not gc.isenabled()


def test_thresholds_a_program_sets_meanwhile_are_kept() -> None:
    with collector_paused():
        gc.set_threshold(1234, 5, 6)
    assert gc.get_threshold() == (1234, 5, 6)


def test_nested_and_shared_holds_end_with_the_last() -> None:
    before = gc.get_threshold()
    with collector_paused():
        with collector_paused():
            assert gc.get_threshold()[0] == HELD_THRESHOLD
        assert gc.get_threshold()[0] == HELD_THRESHOLD
    assert gc.get_threshold() == before


def test_no_hold_while_a_thread_of_the_program_runs() -> None:
    stop = threading.Event()
    theirs = threading.Thread(target=stop.wait, name="their-worker", daemon=True)
    theirs.start()
    STARTED.append(theirs)
    try:
        before = gc.get_threshold()
        with collector_paused():
            assert gc.get_threshold() == before
    finally:
        stop.set()
        theirs.join()


def test_our_own_threads_do_not_prevent_the_hold() -> None:
    stop = threading.Event()
    ours = threading.Thread(target=stop.wait, name="platform-eval-pages_0", daemon=True)
    ours.start()
    STARTED.append(ours)
    try:
        with collector_paused():
            assert gc.get_threshold()[0] == HELD_THRESHOLD
    finally:
        stop.set()
        ours.join()


def test_the_hold_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLATFORM_EVAL_GC_HOLD", "0")
    before = gc.get_threshold()
    with collector_paused():
        assert gc.get_threshold() == before


def test_what_the_hold_built_goes_to_the_oldest_generation_without_a_collection() -> None:
    gc.collect()  # young generations empty: the few allocations below set nothing off
    collections = gc.get_stats()
    with collector_paused():
        built = [{"case": i} for i in range(100_000)]
    assert any(obj is built for obj in gc.get_objects(generation=2))
    # Moved, not walked: no collection of any generation ran for it.
    assert [s["collections"] for s in gc.get_stats()] == [s["collections"] for s in collections]


def test_a_small_hold_leaves_the_young_generation_as_it_is() -> None:
    gc.collect()
    with collector_paused():
        built = [{"case": i} for i in range(100)]
    assert any(obj is built for obj in gc.get_objects(generation=0))


def test_objects_a_program_froze_stay_frozen() -> None:
    theirs = [{"frozen": True}]
    gc.freeze()
    try:
        with collector_paused():
            built = [{"case": i} for i in range(100_000)]
        assert built  # a hold large enough to promote, had nothing been frozen
        # Frozen objects are in no generation: unfrozen, it would be back in the oldest.
        assert gc.get_freeze_count() > 0
        assert not any(obj is theirs for obj in gc.get_objects())
    finally:
        gc.unfreeze()


def test_only_a_process_of_ours_sets_what_it_runs_on_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    """A library call never freezes the program's objects; the command's process (and its
    workers) freeze what the cases run on, and what a hold builds afterwards joins it."""
    monkeypatch.setattr(_gc, "_owned", False)
    monkeypatch.setattr(_gc, "_settled", False)
    _gc.settle_for_cases()
    assert gc.get_freeze_count() == 0 and not _gc._settled
    loaded = [{"adk": True}]
    _gc.own_process()
    try:
        _gc.settle_for_cases()
        assert _gc._settled and gc.get_threshold()[0] == _gc.CASES_THRESHOLD
        assert not any(obj is loaded for obj in gc.get_objects())  # frozen: in no generation
        with collector_paused():
            built = [{"case": i} for i in range(100_000)]
        assert not any(obj is built for obj in gc.get_objects())  # frozen with it
        assert gc.get_threshold()[0] == _gc.CASES_THRESHOLD
    finally:
        gc.unfreeze()
