"""How long a job may wait on the target's long-running work, from start to end.

``run --timeout 10`` bounds the command, not one of its waits: an import operation that never
finishes must not hold the upload for its own five minutes before the run's wait starts. The
bound travels in a context variable, as a deadline does in a request's context, so that the
layers between the command and the waits need not each carry it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_deadline: ContextVar[float | None] = ContextVar("platform_eval_wait_deadline", default=None)


@contextmanager
def waiting_at_most(seconds: float | None) -> Iterator[None]:
    """Every wait of the jobs inside ends within ``seconds`` from now (None: no bound; an
    outer, earlier bound stays)."""
    if seconds is None:
        yield
        return
    deadline = time.monotonic() + seconds
    outer = _deadline.get()
    token = _deadline.set(deadline if outer is None else min(outer, deadline))
    try:
        yield
    finally:
        _deadline.reset(token)


def time_left(wait: float | None) -> float | None:
    """``wait`` cut to what is left of the bound (0 once it passed); ``wait`` when unbounded."""
    deadline = _deadline.get()
    if deadline is None:
        return wait
    left = max(deadline - time.monotonic(), 0.0)
    return left if wait is None else min(wait, left)
