"""The one connection policy of everything that talks to an agent or fetches a file for it: an
api_server's REST and SSE, an Agent Runtime, an A2A peer, a live WebSocket.

Three rules, each for a server we do not control:

- **Origins.** Credentials (agent headers, ID tokens, a URL's password) go only to the origin
  (scheme, host, port) they were given for. A redirect to another origin is refused with one line
  naming both; one within the origin is followed. Known secrets are cut out of every message a
  server's answer ends up in (``Secrets.redact``).
- **Deadlines.** httpx's timeouts bound each read, so a server that sends a keep-alive comment
  every second, or a body a byte at a time, holds a call as long as it likes. Every call and
  every turn here runs under ``within``: a deadline of our clock, whatever the server sends.
- **Caps.** Every size is checked while reading, never after: an event stream's line, the
  events of one turn, a JSON answer, a session, an A2A card and answer, a live frame and a live
  turn's audio. Each has a documented default and an environment variable that overrides it
  (``CAPS``); over one, the call fails naming the cap and how to raise it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from .._bound import Bound
from .._capped_transport import CappedTransport
from .._large_reads import LARGE, LargeRead
from .remote import ServedAgentError

_MIB = 1024 * 1024


@dataclass(frozen=True)
class Cap:
    """One size limit: its name in messages, its environment variable, its default, its unit."""

    what: str
    variable: str
    default: int
    unit: str = "MiB"

    @property
    def value(self) -> int:
        """The limit in force (bytes, or a count), read from the environment at each use so
        that a test or a long-lived process can change it."""
        given = os.environ.get(self.variable, "").strip()
        scale = _MIB if self.unit == "MiB" else 1
        if not given:
            return self.default * scale
        try:
            number = float(given)
        except ValueError:
            number = -1.0
        if not number > 0:
            raise ServedAgentError(
                f"{self.variable}={given!r}: expected a positive number of {self.unit}"
            )
        return int(number * scale)

    def shown(self) -> str:
        value = self.value
        amount = f"{value / _MIB:g} MiB" if self.unit == "MiB" else f"{value:,}"
        return f"{amount} ({self.variable})"


#: Every cap of the policy (docs/agents.md lists them with the same numbers).
SSE_LINE = Cap("an event stream's line", "PLATFORM_EVAL_MAX_EVENT_MIB", 32)
TURN_EVENTS = Cap("events in one turn", "PLATFORM_EVAL_MAX_TURN_EVENTS", 10_000, "events")
ANSWER = Cap("a JSON answer", "PLATFORM_EVAL_MAX_ANSWER_MIB", 32)
SESSION = Cap("a session", "PLATFORM_EVAL_MAX_SESSION_MIB", 64)
A2A_CARD = Cap("an A2A agent card", "PLATFORM_EVAL_MAX_CARD_MIB", 1)
A2A_ANSWER = Cap("an A2A answer", "PLATFORM_EVAL_MAX_A2A_ANSWER_MIB", 32)
LIVE_FRAME = Cap("a live frame", "PLATFORM_EVAL_MAX_LIVE_FRAME_MIB", 16)
LIVE_AUDIO = Cap("a live turn's audio", "PLATFORM_EVAL_MAX_LIVE_AUDIO_MIB", 64)
#: A file or image inline in a case's message, as sent to an agent (Gemini takes 20 MB a
#: request inline; a larger one belongs in Cloud Storage, by its URI).
INLINE_PART = Cap("an inline part of a case's message", "PLATFORM_EVAL_MAX_INLINE_MIB", 20)
CAPS = (
    SSE_LINE, TURN_EVENTS, ANSWER, SESSION, A2A_CARD, A2A_ANSWER, LIVE_FRAME, LIVE_AUDIO,
    INLINE_PART,
)  # fmt: skip


class AgentConnectionError(ServedAgentError):
    """The policy stopped a call: a redirect off the origin, a cap, a deadline."""


class CrossOriginRedirectError(AgentConnectionError):
    """A server redirected to another origin than the one its credentials were given for:
    every other call meets it too."""


class CapExceededError(AgentConnectionError):
    """An answer larger than its cap."""


class DeadlineError(AgentConnectionError):
    """No whole answer by the deadline."""


def over_cap(where: str, cap: Cap) -> CapExceededError:
    return CapExceededError(
        f"{where}: {cap.what} is larger than its cap of {cap.shown()}; not read further"
    )


# -- origins --------------------------------------------------------------------------------

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
#: A WebSocket's origin is its HTTP server's.
_SCHEME_OF = {"ws": "http", "wss": "https"}


def origin_of(url: str | httpx.URL) -> str:
    """``scheme://host:port`` of ``url``, with the scheme's default port written out, and
    never its user name or password."""
    parts = urlsplit(str(url))
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or _DEFAULT_PORTS.get(scheme)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{_SCHEME_OF.get(scheme, scheme)}://{host}:{port}"


def redirect_refused(came_from: str, to: str) -> CrossOriginRedirectError:
    return CrossOriginRedirectError(
        f"{origin_of(came_from)} redirected to {origin_of(to)}, another origin: not followed "
        f"(credentials given for {origin_of(came_from)} go nowhere else)"
    )


def redirect_guard(home: str) -> Callable[[httpx.Response], Awaitable[None]]:
    """An httpx response hook that refuses a redirect off ``home``'s origin before httpx
    follows it (httpx calls response hooks on every hop); one within it is followed."""
    where = origin_of(home)

    async def check(response: httpx.Response) -> None:
        if not response.has_redirect_location:
            return
        target = response.request.url.join(response.headers["location"])
        if origin_of(target) != where:
            raise redirect_refused(home, str(target))

    return check


# -- secrets --------------------------------------------------------------------------------


class Secrets:
    """What may never be shown: header values, tokens, passwords. ``redact`` cuts each out of
    a text a server sent (an error body that echoes our request's headers, say)."""

    #: Shorter values are no secrets worth the name, and cutting them would garble text.
    _SHORTEST = 4

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: set[str] = set()
        for value in values:
            self.add(value)

    def add(self, value: str | None) -> None:
        if not value:
            return
        for part in (value, *value.split(None, 1)[1:]):  # "Bearer TOKEN" and TOKEN alone
            part = part.strip()
            if len(part) >= self._SHORTEST:
                self._values.add(part)

    def redact(self, text: str) -> str:
        for value in sorted(self._values, key=len, reverse=True):
            text = text.replace(value, "***")
        return text

    def __repr__(self) -> str:
        return f"Secrets({len(self._values)} kept out of sight)"


# -- deadlines ------------------------------------------------------------------------------

_calls = Bound("platform_eval_agent_deadline")


def run_deadline(seconds: float | None) -> AbstractContextManager[None]:
    """Every call to an agent inside ends by ``seconds`` from now (the run's own timeout;
    None: no bound beyond each call's own; an outer, earlier bound stays)."""
    return _calls.at_most(seconds)


def run_deadline_left() -> float | None:
    """Seconds left of the run's own timeout (None: it has none), for a case sent to a worker
    process to run under (``run_deadline`` there)."""
    return _calls.left()


def call_deadline(turn_timeout: float) -> tuple[float, str]:
    """How long one call or turn may take: ``turn_timeout``, or what is left of the run's
    timeout when that is sooner; and which of the two it is, for the message."""
    left = _calls.left()
    if left is not None and left < turn_timeout:
        return left, "the run's timeout"
    return turn_timeout, "the turn timeout"


@contextlib.asynccontextmanager
async def within(seconds: float, what: str, cause: str = "its deadline") -> AsyncIterator[None]:
    """The block ends by ``seconds`` from now on our clock, or DeadlineError saying ``what``
    gave no whole answer in time, and by which deadline (``cause``)."""
    bound = asyncio.timeout(None if seconds == math.inf else max(seconds, 0.0))
    try:
        async with bound:
            yield
    except TimeoutError:
        if not bound.expired():
            raise  # a timeout inside (a model's probe), not this deadline: it says its own
        raise DeadlineError(
            f"{what} did not answer in time: no whole answer within {seconds:.3g} s ({cause})"
        ) from None


# -- capped reads ---------------------------------------------------------------------------


async def read_capped(response: httpx.Response, cap: Cap, where: str) -> bytes:
    """The response's body, decoded, refused as soon as it passes ``cap`` (a Content-Length
    over it is refused before anything is read); a large one read while no other is
    (``_large_reads``)."""
    async with LargeRead() as large:
        return await _read_capped(response, cap, where, large)


async def _read_capped(response: httpx.Response, cap: Cap, where: str, large: LargeRead) -> bytes:
    limit = cap.value
    declared = response.headers.get("content-length", "")
    if (
        declared.isdigit()
        and int(declared) > limit
        and not response.headers.get("content-encoding")
    ):
        raise over_cap(where, cap)
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            raise over_cap(where, cap)
        await large.grown(len(body))
    return bytes(body)


async def read_to_its_end(response: httpx.Response, where: str) -> None:
    """An answer whose body is not wanted, read to its end under ``ANSWER``, so that its
    connection serves the next request (one left unread is closed: a new connection for every
    case whose session id is taken, measured on 1,000 served cases)."""
    with contextlib.suppress(AgentConnectionError):
        await read_capped(response, ANSWER, where)


async def read_json(response: httpx.Response, cap: Cap, where: str) -> Any:
    """The response's JSON body (None when empty), read under ``cap``, and parsed while no
    other large answer is read."""
    async with LargeRead() as large:
        body = await _read_capped(response, cap, where, large)
        if not body.strip():
            return None
        try:
            return json.loads(body)
        except ValueError:
            raise AgentConnectionError(f"{where} answered with no JSON") from None


async def stream_lines(response: httpx.Response, where: str) -> AsyncGenerator[str, None]:
    """The lines of an event stream, each refused as it passes ``SSE_LINE`` (not once it
    ended: a 300 MiB line is never held whole); a large line read, and handled by the
    reader, while no other large answer is read."""
    limit = SSE_LINE.value
    pending = bytearray()
    async with LargeRead() as large:
        async for chunk in response.aiter_bytes():
            pending += chunk
            while True:
                end = _line_end(pending)
                if end is None:
                    break
                stop, skip = end
                line = bytes(pending[:stop])
                del pending[: stop + skip]
                if len(line) > limit:
                    raise over_cap(where, SSE_LINE)
                yield line.decode("utf-8", errors="replace")
                if len(pending) <= LARGE:
                    large.release()  # the large line was handled before this resumed
            if len(pending) > limit:
                raise over_cap(where, SSE_LINE)
            await large.grown(len(pending))
        if pending:
            yield pending.decode("utf-8", errors="replace")


def _line_end(buffer: bytearray) -> tuple[int, int] | None:
    """Where the first line of ``buffer`` ends and how long its ending is (``\\n``,
    ``\\r\\n`` or ``\\r``, as the SSE format allows); None while no line is whole."""
    newline = buffer.find(b"\n")
    carriage = buffer.find(b"\r")
    if carriage == -1 or (newline != -1 and newline < carriage):
        return None if newline == -1 else (newline, 1)
    if carriage + 1 == len(buffer):
        return None  # a \r\n may be split between chunks
    return carriage, 2 if buffer[carriage + 1 : carriage + 2] == b"\n" else 1


def check_inline_parts(message: Any, where: str) -> None:
    """Raises for a part of ``message`` (google-genai's Content) whose inline data passes
    ``INLINE_PART``, before anything of it is sent."""
    limit = INLINE_PART.value
    for part in getattr(message, "parts", None) or []:
        data = getattr(getattr(part, "inline_data", None), "data", None)
        if data is not None and len(data) > limit:
            raise over_cap(where, INLINE_PART)


def count_events(count: int, where: str) -> None:
    """Raises once a turn sent more events than ``TURN_EVENTS``."""
    if count > TURN_EVENTS.value:
        raise over_cap(where, TURN_EVENTS)


def capped_transport(cap: Cap, where: str) -> httpx.AsyncBaseTransport:
    """A transport whose every answer is cut off past ``cap`` while it is read (for a client
    whose reads are not ours: the a2a-sdk's), over-cap said as ``over_cap`` says it."""
    return CappedTransport(lambda: cap.value, lambda what: over_cap(f"{where} ({what})", cap))


# -- WebSockets -----------------------------------------------------------------------------


async def open_websocket(url: str, headers: dict[str, str], *, open_timeout: float = 30.0) -> Any:
    """A WebSocket client connection to ``url`` (websockets' own), with ``headers``: a redirect
    is followed only within ``url``'s origin (websockets follows one to another host with the
    same headers), and a frame past ``LIVE_FRAME`` closes it (code 1009, ``frame_too_big``)."""
    from websockets.asyncio.client import connect

    home = origin_of(url)

    class _WithinOrigin(connect):
        def process_redirect(self, exc: Exception) -> Exception | str:
            found = super().process_redirect(exc)
            if isinstance(found, str) and origin_of(found) != home:
                return redirect_refused(url, found)
            return found

    return await _WithinOrigin(
        url,
        additional_headers=headers,
        max_size=LIVE_FRAME.value,
        # Frames read ahead of the reader: websockets keeps 16 by default, 16 caps' worth.
        max_queue=LIVE_QUEUE,
        # Frames as sent: a deflated one is inflated into a buffer of up to the cap first.
        compression=None,
        open_timeout=open_timeout,
    )


#: How many frames of a live stream are read ahead of the conversation that reads them.
LIVE_QUEUE = 2


def frame_too_big(exc: BaseException) -> bool:
    """Whether a closed WebSocket was closed by us for a frame past ``LIVE_FRAME``."""
    sent = getattr(exc, "sent", None)
    return getattr(sent, "code", None) == 1009
