"""The retry policy: which failures are retried and how long to wait between attempts.

Which: UNAVAILABLE (503), as AIP-194 says, plus INTERNAL (500) and RESOURCE_EXHAUSTED / 429,
which google-api-core's default predicate (``if_transient_error``) also retries, and 502 from a
front end that lost its backend. DEADLINE_EXCEEDED (504, 408), CANCELLED and every other 4xx
are never retried: AIP-194 says a deadline must be honoured. The transport decides which
methods may repeat (see ``_transport``): reads, deletes, patches and cancel always; a create
only when it cannot have been processed (not sent, or 429) or the server dedupes it by request
id (the emulator).

How long: exponential backoff from 0.5 s doubling to at most 8 s, with full jitter (never
below a tenth of the ceiling), at most 3 retries; a ``Retry-After`` (seconds or HTTP date)
above zero and at most 60 s replaces the backoff. No wait passes the call's deadline.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from dataclasses import dataclass

import httpx

RETRYABLE_STATUS = frozenset({429, 500, 502, 503})

# Errors raised before a single byte of the request reached the server: retrying them can
# never duplicate a create.
NOT_SENT_ERRORS: tuple[type[httpx.HTTPError], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
)

CONNECTION_ERRORS: tuple[type[httpx.HTTPError], ...] = (httpx.TransportError,)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    initial_backoff: float = 0.5
    max_backoff: float = 8.0
    multiplier: float = 2.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        # Zero or negative numbers would retry in a tight loop against a failing server.
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if not 0 < self.initial_backoff <= self.max_backoff < float("inf"):
            raise ValueError("backoffs must satisfy 0 < initial_backoff <= max_backoff < inf")
        if not 1 <= self.multiplier < float("inf"):
            raise ValueError("multiplier must be >= 1")
        if not 0 <= self.max_retry_after < float("inf"):
            raise ValueError("max_retry_after must be >= 0")

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        honoured = parse_retry_after(retry_after)
        if honoured is not None and 0 < honoured <= self.max_retry_after:
            return honoured
        ceiling = min(self.initial_backoff * self.multiplier**attempt, self.max_backoff)
        # Full jitter spreads retries from many clients; never below a tenth of the ceiling so
        # a retry is not fired immediately after the failure.
        return random.uniform(ceiling / 10, ceiling)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` (or ``retry-after-ms``-style float) header value."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        # "inf" and "nan" parse as floats but are no delay a server can mean: not honoured.
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


def should_retry_status(status_code: int) -> bool:
    return status_code in RETRYABLE_STATUS
