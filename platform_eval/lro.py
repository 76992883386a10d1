"""Long-running operations: what deletes and imports return, to wait on or to look at later.

The service answers those methods with a ``google.longrunning.Operation`` that may not be done
yet. ``OperationFuture.wait()`` polls it until it is, then returns the operation's result
(``None`` for a delete, the ``EvaluationSet`` of an import) or raises its error as the same
``google.api_core`` exception a failed call would.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from google.api_core.exceptions import GoogleAPICallError

from ._waiting import Waiter
from .errors import WaitTimeoutError, from_status
from .types import Operation

T = TypeVar("T")

DEFAULT_POLL_INTERVAL = 0.5
DEFAULT_MAX_POLL_INTERVAL = 10.0


class _FutureBase(Generic[T]):
    def __init__(self, operation: Operation, parse: Callable[[dict[str, Any]], T]) -> None:
        self.operation = operation
        self._parse = parse

    @property
    def name(self) -> str | None:
        return self.operation.name

    @property
    def done(self) -> bool:
        """Whether the operation had finished when last seen (``refresh()`` looks again)."""
        # A server that answers a delete with an empty body (google.protobuf.Empty) is done.
        return bool(self.operation.done) or self.operation.name is None

    def exception(self) -> GoogleAPICallError | None:
        """The operation's error, if it finished with one."""
        error = self.operation.error
        if self.done and error is not None and (error.code or error.message):
            return from_status(error, resource=self.name)
        return None

    def _outcome(self) -> T:
        error = self.exception()
        if error is not None:
            raise error
        return self._parse(self.operation.response_fields)

    def _timed_out(self, timeout: float | None) -> WaitTimeoutError:
        return WaitTimeoutError(f"operation {self.name} not done after {timeout} s")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, done={self.done})"


class OperationFuture(_FutureBase[T]):
    """A long-running operation of the synchronous client."""

    def __init__(
        self,
        operation: Operation,
        refresh: Callable[[str], Operation],
        parse: Callable[[dict[str, Any]], T],
    ) -> None:
        super().__init__(operation, parse)
        self._refresh = refresh

    def refresh(self) -> Operation:
        if self.operation.name is not None and not self.done:
            self.operation = self._refresh(self.operation.name)
        return self.operation

    def wait(
        self,
        timeout: float | None = None,
        *,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        max_poll_interval: float = DEFAULT_MAX_POLL_INTERVAL,
    ) -> T:
        """The operation's result once it is done; raises its error if it failed, and
        WaitTimeoutError after ``timeout`` seconds (the operation keeps going)."""
        waiter = Waiter(timeout, poll_interval, max_poll_interval)
        while not self.done:
            delay = waiter.next_delay()
            if delay is None:
                raise self._timed_out(timeout)
            time.sleep(delay)
            self.refresh()
        return self._outcome()

    result = wait


class AsyncOperationFuture(_FutureBase[T]):
    """A long-running operation of the async client (``OperationFuture``, awaited)."""

    def __init__(
        self,
        operation: Operation,
        refresh: Callable[[str], Awaitable[Operation]],
        parse: Callable[[dict[str, Any]], T],
    ) -> None:
        super().__init__(operation, parse)
        self._refresh = refresh

    async def refresh(self) -> Operation:
        if self.operation.name is not None and not self.done:
            self.operation = await self._refresh(self.operation.name)
        return self.operation

    async def wait(
        self,
        timeout: float | None = None,
        *,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        max_poll_interval: float = DEFAULT_MAX_POLL_INTERVAL,
    ) -> T:
        waiter = Waiter(timeout, poll_interval, max_poll_interval)
        while not self.done:
            delay = waiter.next_delay()
            if delay is None:
                raise self._timed_out(timeout)
            await asyncio.sleep(delay)
            await self.refresh()
        return self._outcome()

    result = wait
