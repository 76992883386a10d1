"""Lazy iterators over list methods that follow ``nextPageToken``."""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, NoReturn, TypeVar

from .errors import RepeatedPageTokenError

T = TypeVar("T")


#: Where a list method's answer gives the next page's token.
NEXT_PAGE_TOKEN = "nextPageToken"

#: Pages in a row with nothing on them (and a next page) before a pager gives up: a server may
#: answer an empty page now and then, never this many in a row.
MAX_EMPTY_PAGES = 100
#: Seconds of empty pages in a row (each with a next page) before a pager gives up: slow empty
#: pages would otherwise hold it MAX_EMPTY_PAGES times their delay.
MAX_EMPTY_SECONDS = 60.0
#: Pages one listing reads at most: at the service's page sizes, far more resources than any
#: project holds, and a bound on a server that makes up new ones for ever.
MAX_PAGES = 100_000
#: Seconds one listing spends waiting on its pages at most (the caller's own time between
#: pages not counted): a server that makes up one new resource a page, each page answered in
#: 10 ms, would otherwise hold a listing MAX_PAGES times that, some 17 minutes.
MAX_LISTING_SECONDS = 300.0


class PageTokens:
    """The page tokens a pager followed: a token given a second time is an error, not a loop."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def next_of(self, body: Any) -> str | None:
        """The next page's token in a list answer, None on the last page."""
        token = body.get(NEXT_PAGE_TOKEN) or None
        if token:
            self.check(str(token))
        return token

    def check(self, token: str) -> None:
        if token in self.seen:
            _stop(f"gave the page token {token[:40]!r} a second time", len(self.seen))
        self.seen.add(token)


def _stop(what: str, pages: int) -> NoReturn:
    raise RepeatedPageTokenError(
        f"the server {what} after {pages} pages; stopping rather than reading pages for ever"
    )


class _Follower:
    """Decides each next page token, and stops a server that would have the pager read for
    ever: a token given twice, pages with nothing new on them (empty, or only resources given
    before) for MAX_EMPTY_PAGES pages or MAX_EMPTY_SECONDS, the same page again under a new
    token, or more than MAX_PAGES pages (a pager's memory would grow, and its caller wait,
    without end)."""

    def __init__(self) -> None:
        self.tokens = PageTokens()
        #: Seconds spent waiting on pages so far (``fetched``).
        self.waited = 0.0
        self.empty = 0
        self.empty_since = 0.0
        self.last: list[str] | None = None
        #: What every page so far held: a resource's name, or a digest of one without a name.
        self.held: set[str] = set()

    def fetched(self, started: float) -> None:
        """A page arrived, asked for at ``started`` (``time.monotonic``)."""
        self.waited += time.monotonic() - started

    def follow(self, page: Page[T]) -> str | None:
        token = page.next_page_token
        if not token:
            return None
        self.tokens.check(token)
        pages = len(self.tokens.seen)
        if pages >= MAX_PAGES:
            _stop("still gave a next page", pages)
        if self.waited > MAX_LISTING_SECONDS:
            _stop(f"still gave a next page after {self.waited:.0f} s of pages", pages)
        held = [_identity(item) for item in page.items]
        if held and held == self.last:
            _stop("answered the same page again under a new page token", pages)
        # A page of resources all given before brings nothing, as an empty one (a resource
        # given twice in a listing that changes under it is passed on, not an error).
        self._check_empty(any(one not in self.held for one in held), pages)
        self.held.update(held)
        self.last = held
        return token

    def _check_empty(self, brought: bool, pages: int) -> None:
        if brought:
            self.empty = 0
            return
        now = time.monotonic()
        if self.empty == 0:
            self.empty_since = now
        self.empty += 1
        if self.empty >= MAX_EMPTY_PAGES:
            _stop(
                f"answered {self.empty} empty pages in a row (or none new), each with a next page",
                pages,
            )
        if self.empty > 1 and now - self.empty_since > MAX_EMPTY_SECONDS:
            _stop(
                f"answered empty pages (or none new) for {now - self.empty_since:.0f} s in a "
                "row, each with a next page",
                pages,
            )


def _identity(item: object) -> str:
    """A resource by its name, or one without a name by a digest of what it holds."""
    name = getattr(item, "name", None)
    if isinstance(name, str) and name:
        return name
    text = item.model_dump_json() if hasattr(item, "model_dump_json") else repr(item)
    return "#" + hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_page_token: str | None

    @property
    def has_next_page(self) -> bool:
        return bool(self.next_page_token)


class Pager(Generic[T]):
    """Iterating yields every resource across pages; ``iter_pages()`` yields the pages."""

    def __init__(self, fetch_page: Callable[[str | None], Page[T]]) -> None:
        self._fetch_page = fetch_page

    def iter_pages(self) -> Iterator[Page[T]]:
        token: str | None = None
        follower = _Follower()
        while True:
            started = time.monotonic()
            page = self._fetch_page(token)
            follower.fetched(started)
            yield page
            token = follower.follow(page)
            if token is None:
                return

    def __iter__(self) -> Iterator[T]:
        for page in self.iter_pages():
            yield from page.items


class AsyncPager(Generic[T]):
    """``async for`` yields every resource across pages; ``iter_pages()`` yields the pages."""

    def __init__(self, fetch_page: Callable[[str | None], Awaitable[Page[T]]]) -> None:
        self._fetch_page = fetch_page

    async def iter_pages(self) -> AsyncIterator[Page[T]]:
        token: str | None = None
        follower = _Follower()
        while True:
            started = time.monotonic()
            page = await self._fetch_page(token)
            follower.fetched(started)
            yield page
            token = follower.follow(page)
            if token is None:
                return

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.iter_pages():
            for item in page.items:
                yield item

    async def to_list(self) -> list[T]:
        return [item async for item in self]
