"""Running async work to completion for a sync ``Client``, inside or outside an event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .client import AsyncClient, Client

T = TypeVar("T")


class _Outcome:
    """A job's result, behind a repr that costs nothing.

    When ``asyncio.run`` puts the SIGINT handler back, ``signal.getsignal`` formats the repr of
    its handler, which holds the finished task, whose repr holds the result's: for an evaluation
    of 200 cases with their sessions that took 0.3 s, after the work was done.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<platform_eval result>"


def _run_with_async_client(client: Client, job: Callable[[AsyncClient], Awaitable[T]]) -> T:
    """Runs ``job`` with an AsyncClient cloned from ``client``, and closes it after."""

    async def main() -> _Outcome:
        async_client = client.to_async()
        try:
            return _Outcome(await job(async_client))
        finally:
            await async_client.close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        outcome = asyncio.run(main())
    else:
        # Called from inside an event loop (a notebook, an async app): on a thread of its own.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            # In the caller's context: a bound on waiting (jobs.waiting_at_most) goes along.
            context = contextvars.copy_context()
            outcome = pool.submit(context.run, asyncio.run, main()).result()
    value: T = outcome.value
    return value


def run_or_defer(client: Client | AsyncClient, job: Callable[[AsyncClient], Awaitable[T]]) -> Any:
    """The job's result for a sync ``Client``; for an ``AsyncClient``, the awaitable itself.

    Every job is written once, async; this is where a sync caller gets its answer.
    """
    from .client import AsyncClient

    if isinstance(client, AsyncClient):
        return job(client)
    return _run_with_async_client(client, job)
