"""The cyclic garbage collector, held back while a large JSON response becomes objects.

Decoding a page of a thousand items and building their models allocates hundreds of thousands
of objects that all survive until the page is done. Each allocation burst sets off the
collector, which then walks every young object again and again without finding a cycle (JSON
and the models built from it hold none): measured on a page of 1,000 result items, 4.6x the
decode time and 5x the model time (issue 11, benchmarks/bench_results.py).

The collector is the process's, not a thread's, so the hold is kept to our own work:

* it is taken only when every other running thread is one of ours (named ``platform-eval-*``:
  the client's page readers, the embedded emulator): a program with threads of its own keeps
  its collector as it was, and pays the slower decode instead;
* it covers only the CPU-bound decode, never a wait on the network, and is shared by our
  threads: it ends when the last one is done;
* it raises the collector's first threshold and never calls ``gc.disable()`` or
  ``gc.enable()``, so a program's own ``gc.disable()`` is never undone; and if the program
  sets thresholds of its own meanwhile, those are kept;
* what the hold built goes to the oldest generation when it ends, without a walk
  (``_promote_without_a_walk``);
* ``PLATFORM_EVAL_GC_HOLD=0`` turns it off.
"""

from __future__ import annotations

import gc
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: The name every thread platform-eval starts begins with.
OUR_THREADS = "platform-eval"
#: A first-generation threshold no decode reaches: allocations never set off a collection.
HELD_THRESHOLD = 2**30
ENV = "PLATFORM_EVAL_GC_HOLD"
#: JSON at least this large is decoded with the collector paused (``decode``).
LARGE_JSON = 64 * 1024

_lock = threading.Lock()
_depth = 0
#: The thresholds before the hold, and the ones it set (to tell whether anyone changed them).
_saved: tuple[int, ...] | None = None
_held: tuple[int, ...] | None = None


#: The running threads (a name tests can point elsewhere).
_running_threads = threading.enumerate


def _only_ours() -> bool:
    me = threading.current_thread()
    return all(t is me or t.name.startswith(OUR_THREADS) for t in _running_threads())


def _wanted() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection inside, when that touches nobody's work but ours."""
    global _depth, _saved, _held
    with _lock:
        holding = _depth > 0 or (_wanted() and _only_ours())
        if holding:
            if _depth == 0:
                _saved = gc.get_threshold()
                _held = (HELD_THRESHOLD, *_saved[1:])
                gc.set_threshold(*_held)
            _depth += 1
    try:
        yield
    finally:
        if holding:
            with _lock:
                _depth -= 1
                if _depth == 0:
                    if _saved is not None and gc.get_threshold() == _held:
                        gc.set_threshold(*_saved)
                        _promote_without_a_walk()
                    _saved = _held = None


#: The collector's first threshold while cases run in a process of ours (Python's default is
#: 700): a case builds tens of thousands of objects that live until it ends, and each burst set
#: off collections that walked them again and found no cycle (200 cases in one process, frozen
#: and at this threshold: 2.6 s of CPU, 3.0 s as Python starts; medians of three). Cycles are
#: still collected, less often.
CASES_THRESHOLD = 20_000
#: Objects the young generation holds when a hold ends from which they are promoted without a
#: walk; below it, the young collection that follows is cheap, and the program's own young
#: objects are left where they are.
PROMOTED_FROM = 50_000
#: The process is platform-eval's own (the command, a worker it started), not a program that
#: imported it: what it loaded may be set aside for good (``settle_for_cases``).
_owned = False
#: ``settle_for_cases`` froze what the process runs on.
_settled = False


def own_process() -> None:
    """Called by the command's entry point and its worker processes, never by a library call."""
    global _owned
    _owned = True


def settle_for_cases() -> None:
    """Once what the agent's cases run on is loaded (google-adk, the agent), in a process of
    ours: it lives as long as the process, so it is frozen out of every collection's walk
    (300 cases in the command's process: 9 full collections of 0.2 s each walked it), and the
    young generation collects at ``CASES_THRESHOLD``. Elsewhere, nothing."""
    global _settled
    if _settled or not (_owned and _wanted() and gc.isenabled()):
        return
    with _lock:
        gc.freeze()
        gc.set_threshold(CASES_THRESHOLD, *gc.get_threshold()[1:])
        _settled = True


def _promote_without_a_walk() -> None:
    """What the hold built is meant to live (a page of items, an eval set's cases): it goes
    to the oldest generation as it is, instead of the next young collection walking every
    object of it and, having promoted them, setting off a full collection (3,000 cases: 0.6 s
    of the upload's 1.6 s of CPU). ``gc.unfreeze()`` puts what ``gc.freeze()`` set aside
    into the oldest generation; a program that froze objects of its own keeps them frozen
    (nothing is done then). A cycle built meanwhile is still collected, by a full collection.
    In a process of ours that froze what it runs on (``settle_for_cases``), what the hold built
    is frozen with it: a command's cases and pages live until it ends."""
    if not gc.isenabled() or gc.get_count()[0] < PROMOTED_FROM:
        return  # a young collection of a few objects is cheap: left to run as usual
    if _settled:
        # Our process froze what it runs on: that stays frozen, and this joins it.
        gc.freeze()
    elif gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def decode(text: str | bytes) -> Any:
    """``json.loads``, with the collector paused for a large document."""
    if len(text) < LARGE_JSON:
        return json.loads(text)
    with collector_paused():
        return json.loads(text)
