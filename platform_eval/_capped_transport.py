"""An httpx transport whose answers are read no further than a cap, for a client whose reads
are not ours (google-genai's, the a2a-sdk's): it asks for the answer unencoded (a compressed
answer is the same bytes in memory once decoded, and a small one can decode to gigabytes),
refuses one that announces more than the cap, or comes encoded anyway, before any of it is
read, and stops reading one that goes past it. Each user says over-cap in its own words
(``refused``: what happened -> the exception to raise)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx

from ._large_reads import LargeRead

#: What went wrong, in a few words ("went past 1,024 bytes") -> the exception to raise.
Refusal = Callable[[str], Exception]


class CappedTransport(httpx.AsyncBaseTransport):
    """Answers read up to ``limit`` bytes (a callable: read at each request), no further."""

    def __init__(
        self,
        limit: int | Callable[[], int],
        refused: Refusal,
        inner: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._limit = limit
        self._refused = refused
        self._inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        limit = self._limit() if callable(self._limit) else self._limit
        request.headers["accept-encoding"] = "identity"
        response = await self._inner.handle_async_request(request)
        announced = response.headers.get("content-length", "")
        if announced.isdigit() and int(announced) > limit:
            await response.aclose()
            raise self._refused(f"announced {int(announced):,} bytes")
        encoding = response.headers.get("content-encoding", "identity").lower()
        if encoding != "identity":
            # Asked for none, given one anyway: its decoded size is unknown until decoded.
            await response.aclose()
            raise self._refused(f"came {encoding}-encoded though none was asked for")
        stream = response.stream
        assert isinstance(stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Capped(stream, limit, self._refused),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Capped(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, limit: int, refused: Refusal) -> None:
        self._inner = inner
        self._limit = limit
        self._refused = refused

        # Held from when the answer is large until it is closed (its reader has it whole).
        self._large = LargeRead()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._inner:
            read += len(chunk)
            if read > self._limit:
                await self.aclose()
                raise self._refused(f"went past {self._limit:,} bytes")
            await self._large.grown(read)
            yield chunk

    async def aclose(self) -> None:
        self._large.release()
        await self._inner.aclose()
