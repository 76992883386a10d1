"""The retry policy: which failures are retried and how long to wait between attempts.

Numbers follow google-api-core and the Anthropic SDK: exponential backoff from 0.5 s doubling
to at most 8 s, with full jitter, and at most 3 retries by default. A ``Retry-After`` header
(seconds or an HTTP date) is honoured when it asks for at most 60 s.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass

import httpx

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})

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

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        honoured = parse_retry_after(retry_after)
        if honoured is not None and 0 <= honoured <= self.max_retry_after:
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
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


def should_retry_status(status_code: int) -> bool:
    return status_code in RETRYABLE_STATUS
