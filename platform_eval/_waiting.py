"""Poll timing shared by everything that waits on the server: runs and long-running operations."""

from __future__ import annotations

import math
import time

#: How long a wait lasts when no timeout is given: longer than any evaluation run the service
#: documents, and not forever (a run or an operation that never ends is waited on no longer).
DEFAULT_WAIT_TIMEOUT = 24 * 3600.0


class Waiter:
    """Starts at ``poll_interval``, grows 1.5x to ``max_interval``, stops at ``timeout``
    (``DEFAULT_WAIT_TIMEOUT`` when None)."""

    def __init__(self, timeout: float | None, poll_interval: float, max_interval: float) -> None:
        if poll_interval <= 0:
            raise ValueError("poll_interval must be > 0")
        if timeout is None:
            timeout = DEFAULT_WAIT_TIMEOUT
        if not 0 <= timeout < math.inf:  # NaN fails this too
            raise ValueError(f"timeout must be a finite number of seconds >= 0, got {timeout!r}")
        self._deadline = time.monotonic() + timeout
        self._interval = poll_interval
        self._max = max(max_interval, poll_interval)
        self.timeout = timeout

    def next_delay(self) -> float | None:
        """Seconds to sleep before the next poll, or None once the deadline passed."""
        delay = self._interval
        self._interval = min(self._interval * 1.5, self._max)
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            return None
        return min(delay, remaining)
