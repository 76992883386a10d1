"""Lazy iterators over list methods that follow ``nextPageToken``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from .errors import RepeatedPageTokenError

T = TypeVar("T")


def _follow(page: Page[T], seen: set[str]) -> str | None:
    """The next page's token, or None at the end; a token given before is an error (a server
    that repeats one would have the pager loop, and its memory grow, forever)."""
    token = page.next_page_token
    if not token:
        return None
    if token in seen:
        raise RepeatedPageTokenError(
            f"the server gave the page token {token[:40]!r} a second time after "
            f"{len(seen)} pages; stopping rather than reading the same pages forever"
        )
    seen.add(token)
    return token


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
        seen: set[str] = set()
        while True:
            page = self._fetch_page(token)
            yield page
            token = _follow(page, seen)
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
        seen: set[str] = set()
        while True:
            page = await self._fetch_page(token)
            yield page
            token = _follow(page, seen)
            if token is None:
                return

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.iter_pages():
            for item in page.items:
                yield item

    async def to_list(self) -> list[T]:
        return [item async for item in self]
