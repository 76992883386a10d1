"""Reading a run's RESULT items: the one part of the clients whose sync and async forms differ
in shape, not in keywords (threads read payloads and prefetch pages for ``Client``, tasks for
``AsyncClient``). The rest of ``Client`` is generated from ``AsyncClient`` (``_client_sync``).

Both readers take a page of results while the next is on its way, build items a batch at a
time, read payloads kept in Cloud Storage ``RESULTS_CONCURRENCY`` at a time, and read by name
the items a server that cannot filter by run did not list.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from ._client_base import _KEPT, _STREAMED, RESULTS_CONCURRENCY, _next_batch, _no_items, _Reading
from ._names import ResourceRef
from ._operations import Op, Operations
from ._pagination import PageTokens
from ._result_items import ExpectedResults, is_result, result_set_name
from .errors import InvalidArgument
from .types import EvaluationItem, EvaluationRun, EvaluationSet

if TYPE_CHECKING:
    from ._transport import AsyncTransport, SyncTransport

P = TypeVar("P")


class SyncResultReading:
    """``Client``'s reading of results."""

    if TYPE_CHECKING:
        _ops: Operations
        _transport: SyncTransport

        def get_run(self, run: ResourceRef) -> EvaluationRun: ...

        def get_set(self, evaluation_set: ResourceRef) -> EvaluationSet: ...

        def get_item(self, item: ResourceRef, *, read_payload: bool = True) -> EvaluationItem: ...

        def _with_payload(self, item: EvaluationItem) -> EvaluationItem: ...

    def get_results(self, run: ResourceRef) -> list[EvaluationItem]:
        """Every RESULT item of a finished run, in the order of its result set."""
        expected, items = self._results(run, _KEPT)
        return expected.ordered(items) if expected else []

    def iter_results(self, run: ResourceRef) -> Iterator[EvaluationItem]:
        """Every RESULT item of a finished run, lazily, in the order the server lists them.

        Items come a page of 250 at a time (the next page is requested while this one is
        read) and are built from the page's JSON a few at a time, so memory holds about two
        pages of JSON, not the run.
        """
        return self._results(run, _STREAMED)[1]

    def _results(
        self, run: ResourceRef, reading: _Reading
    ) -> tuple[ExpectedResults | None, Iterator[EvaluationItem]]:
        current = run if isinstance(run, EvaluationRun) and run.done else self.get_run(run)
        set_name = result_set_name(current)
        if set_name is None:
            return None, iter(())
        expected = ExpectedResults(self.get_set(set_name).evaluation_items or [])
        return expected, self._read_results(current.name or "", expected, reading)

    def _read_results(
        self, run_name: str, expected: ExpectedResults, reading: _Reading
    ) -> Iterator[EvaluationItem]:
        # Payloads in Cloud Storage, and items read one by one, are read RESULTS_CONCURRENCY
        # at a time, as AsyncClient reads them.
        with ThreadPoolExecutor(
            max_workers=RESULTS_CONCURRENCY, thread_name_prefix="platform-eval-results"
        ) as readers:
            pages = self._prefetched(
                lambda token: self._ops.result_items_page(run_name, token, reading.page_size)
            )
            try:
                for page in pages:
                    taken = expected.take(page)
                    while batch := _next_batch(taken, reading.batch):
                        if any(self._ops.payload_uri(item) for item in batch):
                            yield from readers.map(self._with_payload, batch)
                        else:
                            yield from batch
                    if expected.complete:
                        break
            except InvalidArgument:
                pass  # a server that cannot filter items by run: each is read by name below
            for item in readers.map(self.get_item, expected.missing()):
                if is_result(item):
                    yield item

    def _prefetched(self, page_op: Callable[[str | None], Op[P]]) -> Iterator[P]:
        """Pages in order; the next one is requested while the caller reads this one."""
        seen = PageTokens()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="platform-eval-pages") as pool:
            op = page_op(None)
            pending = pool.submit(self._transport.request, op.call)
            while True:
                body = pending.result()
                token = seen.next_of(body)
                if token:
                    following = page_op(token)
                    pending = pool.submit(self._transport.request, following.call)
                page = op.read(body)
                del body  # what the page holds is all the caller needs
                yield page
                if not token:
                    return
                op = following


class AsyncResultReading:
    """``AsyncClient``'s reading of results."""

    if TYPE_CHECKING:
        _ops: Operations
        _transport: AsyncTransport

        async def get_run(self, run: ResourceRef) -> EvaluationRun: ...

        async def get_set(self, evaluation_set: ResourceRef) -> EvaluationSet: ...

        async def get_item(
            self, item: ResourceRef, *, read_payload: bool = True
        ) -> EvaluationItem: ...

        async def _with_payload(self, item: EvaluationItem) -> EvaluationItem: ...

    async def get_results(self, run: ResourceRef) -> list[EvaluationItem]:
        """Every RESULT item of a finished run, in the order of its result set."""
        expected, items = await self._results(run, _KEPT)
        return expected.ordered([item async for item in items]) if expected else []

    async def iter_results(self, run: ResourceRef) -> AsyncIterator[EvaluationItem]:
        """Every RESULT item of a finished run, lazily, in the order the server lists them.

        Items come a page of 250 at a time (the next page is requested while this one is
        read) and are built from the page's JSON a few at a time, so memory holds about two
        pages of JSON, not the run.
        """
        _, items = await self._results(run, _STREAMED)
        async for item in items:
            yield item

    async def _results(
        self, run: Any, reading: _Reading
    ) -> tuple[ExpectedResults | None, AsyncIterator[EvaluationItem]]:
        current = run if isinstance(run, EvaluationRun) and run.done else await self.get_run(run)
        set_name = result_set_name(current)
        if set_name is None:
            return None, _no_items()
        expected = ExpectedResults((await self.get_set(set_name)).evaluation_items or [])
        return expected, self._read_results(current.name or "", expected, reading)

    async def _read_results(
        self, run_name: str, expected: ExpectedResults, reading: _Reading
    ) -> AsyncIterator[EvaluationItem]:
        limit = asyncio.Semaphore(RESULTS_CONCURRENCY)

        async def limited(read: Awaitable[EvaluationItem]) -> EvaluationItem:
            async with limit:
                return await read

        pages = self._prefetched(
            lambda token: self._ops.result_items_page(run_name, token, reading.page_size)
        )
        try:
            async for page in pages:
                taken = expected.take(page)
                while True:
                    # Built in a thread, a batch at a time, so the event loop keeps the next
                    # page's request moving and memory holds a batch, not the page.
                    batch = await asyncio.to_thread(_next_batch, taken, reading.batch)
                    if not batch:
                        break
                    if any(self._ops.payload_uri(item) for item in batch):
                        batch = await asyncio.gather(
                            *(limited(self._with_payload(i)) for i in batch)
                        )
                    for item in batch:
                        yield item
                if expected.complete:
                    break
        except InvalidArgument:
            pass  # a server that cannot filter items by run: each is read by name below
        missing = expected.missing()
        for item in await asyncio.gather(*(limited(self.get_item(n)) for n in missing)):
            if is_result(item):
                yield item

    async def _prefetched(self, page_op: Callable[[str | None], Op[P]]) -> AsyncIterator[P]:
        """Pages in order; the next one is requested while the caller reads this one."""
        seen = PageTokens()
        op = page_op(None)
        pending = asyncio.ensure_future(self._transport.request(op.call))
        try:
            while True:
                body = await pending
                token = seen.next_of(body)
                if token:
                    following = page_op(token)
                    pending = asyncio.ensure_future(self._transport.request(following.call))
                page = op.read(body)
                del body  # what the page holds is all the caller needs
                yield page
                if not token:
                    return
                op = following
        finally:
            pending.cancel()
