"""Large answers read one at a time. Every answer of a server we do not control is capped
while it is read (``agents.connection``), but the cases run many at once: 24 sessions each
just under a 64 MiB cap would be 1.5 GiB read together, and as much again parsed. An answer
that grows past ``LARGE`` waits for the process's one place for large reads and holds it
until it is read and parsed; smaller answers never wait. So the memory of reading stays about
one cap (and a little for each of the others), however many cases run at once.

One place, one holder: a holder never waits for anything else here, so the wait always ends
(at the latest at the holder's own deadline)."""

from __future__ import annotations

import asyncio
import weakref
from types import TracebackType

#: An answer past this many bytes is a large one.
LARGE = 8 * 2**20

# One place a loop: an asyncio.Lock belongs to the loop that first waits on it.
_places: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


def _place() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    place = _places.get(loop)
    if place is None:
        place = _places[loop] = asyncio.Lock()
    return place


class LargeRead:
    """One answer's read: ``await read.grown(size)`` as it grows (it waits for the place once
    the answer is large), ``release()`` once what was read is parsed; leaving the block
    releases it too."""

    def __init__(self) -> None:
        self._held: asyncio.Lock | None = None

    async def grown(self, size: int) -> None:
        if self._held is None and size > LARGE:
            place = _place()
            await place.acquire()
            self._held = place

    @property
    def holding(self) -> bool:
        return self._held is not None

    def release(self) -> None:
        if self._held is not None:
            self._held.release()
            self._held = None

    async def __aenter__(self) -> LargeRead:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()
