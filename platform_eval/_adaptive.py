"""Concurrency that finds the quota: calls at once raised while they succeed, cut when the model
says it is over its limit (429 RESOURCE_EXHAUSTED, 503), never above a cap.

An additive-increase, multiplicative-decrease limit, as TCP's congestion control and MLflow's
rate limiter: it starts at ``start`` calls at once; until the first cut, each success that
found the limit full raises it by one (it doubles per round of calls); after it, by one per
round. A call answered 429 or 503 cuts the calls at once to ``BACKOFF`` of those under way
(once per round: the calls already under way when it was cut do not cut it again) and, when the
answer says ``Retry-After``, no new call starts before then (``LONGEST_PAUSE`` at the most).
After the first cut, a success that took more than twice the fastest call's time holds the
limit where it is: the model is slowing down before it refuses. Not before: the first calls'
times are as much this process warming up (imports, connections, a worker process starting
beside it) as the model's pace.

The cut is gentler than TCP's halving (CUBIC's 0.7): a refused call here is not lost, it waits
a second and is asked again, and a limit halved below the quota leaves the model idle for the
many rounds the additive increase takes to climb back.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

#: Calls at once an adaptive limit starts at, and its cap unless told (``--max-concurrency``).
START = 4
DEFAULT_CAP = 32
#: What a choice of concurrency is: a number, or this word for the adaptive limit.
AUTO = "auto"
#: A success this many times slower than the fastest call holds the limit.
SLOWER = 2.0
#: A refusal cuts the calls at once to this share of those under way.
BACKOFF = 0.7
#: The longest a ``Retry-After`` holds new calls: a server asking for a day (a spent daily
#: quota) is answered by each call's own deadline and retries, not by a limit that stops
#: every call for as long as it asks.
LONGEST_PAUSE = 60.0


def parse_concurrency(value: str | int) -> int | str:
    """``auto`` or a whole number 1 or more; ValueError naming what was given otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    else:
        try:
            number = int(str(value).strip())
        except ValueError:
            raise ValueError(f"expected {AUTO!r} or a whole number, got {value!r}") from None
    if number < 1:
        raise ValueError(f"expected {AUTO!r} or a whole number 1 or more, got {number}")
    return number


class AdaptiveLimit:
    """Calls at once, adapted to what the model takes (see the module). One event loop's."""

    def __init__(self, start: int = START, cap: int = DEFAULT_CAP) -> None:
        if cap < 1:
            raise ValueError("the concurrency cap must be at least 1")
        self.cap = cap
        self._limit = float(min(max(1, start), cap))
        self._in_flight = 0
        self._slow_start = True
        #: Calls started since the last cut: the ones before it do not cut it again.
        self._epoch = 0
        self._paused_until = 0.0
        self._fastest: float | None = None
        #: Calls waiting for a place, first come first served, and how many of them were
        #: woken for a place and have not yet taken it (so one free place wakes one call).
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._woken = 0
        #: The highest limit reached, and how many cuts: for reports and benchmarks.
        self.highest = int(self._limit)
        self.cuts = 0

    @property
    def limit(self) -> int:
        """Calls allowed at once now."""
        return int(self._limit)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Call]:
        """A place among the calls at once; the call says how it went (``Call``)."""
        await self._take()
        full = self._in_flight >= self.limit
        call = Call(self, self._epoch, full)
        try:
            yield call
        finally:
            self._in_flight -= 1
            call.settle()
            self._wake()

    async def _take(self) -> None:
        """Waits for a place and takes it. One event loop runs every call, so what is checked
        and taken between two awaits is taken at once: no lock. A call waits in line behind
        those that came first; a woken one takes the place it was woken for."""
        woken = False
        while True:
            pause = self._paused_until - time.monotonic()
            if pause <= 0 and self._in_flight < self.limit and (woken or not self._in_line()):
                self._in_flight += 1
                return
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                if pause > 0:
                    with suppress(TimeoutError):
                        await asyncio.wait_for(waiter, pause)
                else:
                    await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._woken -= 1
                    self._wake()  # the place it was woken for goes to the next in line
                raise
            finally:
                # Timed out or cancelled: left in line, done, for ``_wake`` and ``_in_line`` to
                # pass over (taking it out of the middle of a long line costs the line's length).
                waiter.cancel()
            woken = waiter.done() and not waiter.cancelled()
            if woken:
                self._woken -= 1

    def _in_line(self) -> bool:
        """Whether a call waits for a place (those that stopped waiting dropped first)."""
        while self._waiters and self._waiters[0].done():
            self._waiters.popleft()
        return bool(self._waiters)

    def _wake(self) -> None:
        """Wakes one waiting call for each free place no woken call is taking yet (a success
        that raised the limit frees more than one; waking every waiter at each release made
        each call cost as much as the calls waiting)."""
        free = self.limit - self._in_flight - self._woken
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                self._woken += 1
                free -= 1

    # -- what calls report, as each ends (Call.settle) -----------------------------------------

    def _succeeded(self, seconds: float | None, full: bool) -> None:
        if seconds is not None:
            earlier = self._fastest
            fastest = self._fastest = seconds if earlier is None else min(earlier, seconds)
            if not self._slow_start and seconds > SLOWER * fastest and seconds > 0.05:
                return  # slowing down: hold
        if not full:
            return  # the limit was not what held the calls back: no reason to raise it
        step = 1.0 if self._slow_start else 1.0 / max(1.0, self._limit)
        self._limit = min(float(self.cap), self._limit + step)
        self.highest = max(self.highest, self.limit)

    def _refused(self, epoch: int, retry_after: float | None) -> None:
        if retry_after is not None and retry_after > 0:
            pause = min(retry_after, LONGEST_PAUSE)
            self._paused_until = max(self._paused_until, time.monotonic() + pause)
        if epoch < self._epoch:
            return  # started before the last cut: that cut answered it already
        self._slow_start = False
        self._limit = max(1.0, float(int((self._in_flight + 1) * BACKOFF)))
        self._epoch += 1
        self.cuts += 1


class _Elapsed:
    """The call's own time, from its place to its success."""


_ELAPSED = _Elapsed()


class Call:
    """One call's place: it says ``succeeded()`` or ``refused(retry_after)`` before it ends
    (a call that says neither, an error that is not the model's load, changes nothing)."""

    def __init__(self, limit: AdaptiveLimit, epoch: int, full: bool) -> None:
        self._limit = limit
        self._epoch = epoch
        self._full = full
        self._started = time.monotonic()
        self._outcome: tuple[str, float | None] | None = None

    def succeeded(self, *, latency: float | _Elapsed | None = _ELAPSED) -> None:
        """The call succeeded. ``latency``: the model's time in it, held against the fastest
        (by default the call's own time; a whole agent case gives its slowest model call, or
        None when it made none, as its own time says nothing of the model's latency)."""
        took = time.monotonic() - self._started if isinstance(latency, _Elapsed) else latency
        self._outcome = ("ok", took)

    def refused(self, retry_after: float | None = None) -> None:
        self._outcome = ("refused", retry_after)

    def refused_now(self, retry_after: float | None = None) -> None:
        """Refused, and the limit cut now, not when the call ends: a long call (an agent case
        making many model calls) whose model says it is over its quota. Later outcomes of the
        call change nothing (a later refusal of the same call still holds new calls for its
        Retry-After; it cuts the limit only while no other call has cut it since this one
        started)."""
        self._limit._refused(self._epoch, retry_after)
        self._outcome = ("done", None)

    def settle(self) -> None:
        if self._outcome is None or self._outcome[0] == "done":
            return
        kind, value = self._outcome
        if kind == "ok":
            self._limit._succeeded(value, self._full)
        else:
            self._limit._refused(self._epoch, value)


class FixedLimit(AdaptiveLimit):
    """``n`` calls at once, whatever they answer: a concurrency the user chose."""

    def __init__(self, n: int) -> None:
        super().__init__(start=n, cap=n)

    def _succeeded(self, seconds: float | None, full: bool) -> None:
        pass

    def _refused(self, epoch: int, retry_after: float | None) -> None:
        pass


def limit_for(concurrency: int | str, cap: int = DEFAULT_CAP) -> AdaptiveLimit:
    """The limit a choice of concurrency (a number, or ``auto``) gives."""
    return AdaptiveLimit(cap=cap) if concurrency == AUTO else FixedLimit(int(concurrency))
