"""Running async work to completion for a sync ``Client``, inside or outside an event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .client import AsyncClient, Client

T = TypeVar("T")


def _run_with_async_client(client: Client, job: Callable[[AsyncClient], Awaitable[T]]) -> T:
    """Runs ``job`` with an AsyncClient cloned from ``client``, and closes it after."""

    async def main() -> T:
        async_client = client.to_async()
        try:
            return await job(async_client)
        finally:
            await async_client.close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    # Called from inside an event loop (a notebook, an async app): run on a thread of its own.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()


def run_or_defer(client: Client | AsyncClient, job: Callable[[AsyncClient], Awaitable[T]]) -> Any:
    """The job's result for a sync ``Client``; for an ``AsyncClient``, the awaitable itself.

    Every job is written once, async; this is where a sync caller gets its answer.
    """
    from .client import AsyncClient

    if isinstance(client, AsyncClient):
        return job(client)
    return _run_with_async_client(client, job)
