"""The cyclic garbage collector, paused while a large JSON response becomes objects.

Decoding a page of a thousand items and building their models allocates hundreds of thousands
of objects that all survive until the page is done. Each allocation burst sets off the
collector, which then walks every young object again and again without finding a cycle (JSON
and the models built from it hold none): measured on a page of 1,000 result items, 4.6x the
decode time and 5x the model time (issue 11, benchmarks/bench_results.py).

The pause covers only that CPU-bound work, never a wait on the network, and is shared by
threads: the collector runs again when the last one is done, and only if it ran before.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
