"""A bound on how long the work inside a block may take, carried in a context variable as a
deadline travels in a request's context, so that the layers between the block and the waits
need not each carry it (``jobs.waiting``: the waits on the target; ``agents.connection``: the
calls to an agent)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class Bound:
    """One kind of bound (its name names the context variable)."""

    def __init__(self, name: str) -> None:
        self._deadline: ContextVar[float | None] = ContextVar(name, default=None)

    @contextmanager
    def at_most(self, seconds: float | None) -> Iterator[None]:
        """The work inside ends within ``seconds`` from now (None: no bound; an outer, earlier
        bound stays)."""
        if seconds is None:
            yield
            return
        deadline = time.monotonic() + seconds
        outer = self._deadline.get()
        token = self._deadline.set(deadline if outer is None else min(outer, deadline))
        try:
            yield
        finally:
            self._deadline.reset(token)

    def left(self) -> float | None:
        """Seconds left of the bound (0 once it passed); None when unbounded."""
        deadline = self._deadline.get()
        return None if deadline is None else max(deadline - time.monotonic(), 0.0)
