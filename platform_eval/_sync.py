"""Running async work to completion for a sync ``Client``, inside or outside an event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .client import AsyncClient, Client

T = TypeVar("T")


def run_with_async_client(client: Client, job: Callable[[AsyncClient], Awaitable[T]]) -> T:
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
