"""Poll timing shared by everything that waits on the server: runs and long-running operations."""

from __future__ import annotations

import time


class Waiter:
    """Starts at ``poll_interval``, grows 1.5x to ``max_interval``, stops at ``timeout``."""

    def __init__(self, timeout: float | None, poll_interval: float, max_interval: float) -> None:
        if poll_interval <= 0:
            raise ValueError("poll_interval must be > 0")
        if timeout is not None and timeout < 0:
            raise ValueError("timeout must be >= 0")
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._interval = poll_interval
        self._max = max(max_interval, poll_interval)
        self.timeout = timeout

    def next_delay(self) -> float | None:
        """Seconds to sleep before the next poll, or None once the deadline passed."""
        delay = self._interval
        self._interval = min(self._interval * 1.5, self._max)
        if self._deadline is None:
            return delay
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            return None
        return min(delay, remaining)
