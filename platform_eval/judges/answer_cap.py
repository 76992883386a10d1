"""A judge model's answer, read no further than a judge could need.

google-genai reads an answer whole before our check of its length: a 300 MB answer cost 813 MB
for one call. The judges' google-genai client sends its requests through this transport, which
asks for the answer unencoded (a compressed answer is the same bytes in memory once decoded)
and stops reading at ``MAX_ANSWER_BYTES``, refusing an answer that announces more before any of
it is read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx

#: The longest model answer read: a judge's text is at most MAX_ANSWER_CHARS (1 Mi characters,
#: up to 4 bytes each), with room for its JSON envelope and escapes.
MAX_ANSWER_BYTES = 8 << 20


class AnswerTooLargeError(Exception):
    """The model's answer is longer than any judge answer: not read further."""


class AnswerCap(httpx.AsyncBaseTransport):
    """An httpx transport that stops reading an answer beyond ``limit`` bytes."""

    def __init__(
        self, limit: int = MAX_ANSWER_BYTES, inner: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self._limit = limit
        self._inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["accept-encoding"] = "identity"
        response = await self._inner.handle_async_request(request)
        announced = response.headers.get("content-length", "")
        if announced.isdigit() and int(announced) > self._limit:
            await response.aclose()
            raise AnswerTooLargeError(self._said(f"announced {int(announced):,} bytes"))
        if response.headers.get("content-encoding", "identity").lower() != "identity":
            # Asked for none, given one anyway: its decoded size is unknown until decoded.
            await response.aclose()
            raise AnswerTooLargeError(
                f"the answer came {response.headers['content-encoding']}-encoded though none "
                "was asked for: not read"
            )
        stream = response.stream
        assert isinstance(stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Capped(stream, self._limit, self._said),
            extensions=response.extensions,
        )

    def _said(self, what: str) -> str:
        return (
            f"the model's answer {what}, more than the {self._limit:,} a judge answer may "
            "have: not read further"
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Capped(httpx.AsyncByteStream):
    def __init__(
        self, inner: httpx.AsyncByteStream, limit: int, said: Callable[[str], str]
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._said = said

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._inner:
            read += len(chunk)
            if read > self._limit:
                await self._inner.aclose()
                raise AnswerTooLargeError(self._said(f"went past {self._limit:,} bytes"))
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()
