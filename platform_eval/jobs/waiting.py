"""How long a job may wait on the target's long-running work, from start to end.

``run --timeout 10`` bounds the command, not one of its waits: an import operation that never
finishes must not hold the upload for its own five minutes before the run's wait starts. The
bound travels in a context variable, as a deadline does in a request's context, so that the
layers between the command and the waits need not each carry it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from .._bound import Bound

_waits = Bound("platform_eval_wait_deadline")


def waiting_at_most(seconds: float | None) -> AbstractContextManager[None]:
    """Every wait of the jobs inside ends within ``seconds`` from now (None: no bound; an
    outer, earlier bound stays)."""
    return _waits.at_most(seconds)


def time_left(wait: float | None) -> float | None:
    """``wait`` cut to what is left of the bound (0 once it passed); ``wait`` when unbounded."""
    left = _waits.left()
    if left is None:
        return wait
    return left if wait is None else min(wait, left)
