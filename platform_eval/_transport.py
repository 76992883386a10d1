"""HTTP transport: the only code that does network I/O.

``_TransportBase`` holds everything that does no I/O (URLs, headers, retry decisions, response
and error mapping); ``SyncTransport`` and ``AsyncTransport`` only send, so the two cannot drift.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import platform
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from . import errors
from ._auth import Authenticator, may_carry_token
from ._config import shown_url
from ._deadline import bounded_transport, deadline_of
from ._gc import LARGE_JSON, collector_paused
from ._listing import Listing
from ._retry import CONNECTION_ERRORS, NOT_SENT_ERRORS, RetryPolicy, should_retry_status
from ._tls import default_context
from ._version import __version__

_logger = logging.getLogger("platform_eval.http")

#: ``scheme://user:password@`` in a logged line.
_USERINFO = re.compile(r"(\w+://)[^/\s@]+@")


class _NoUserinfo(logging.Filter):
    """httpx logs each request's URL whole: an endpoint's user and password would reach
    ``--debug`` output and log files. They are replaced before any handler sees the line."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "@" in message:
            record.msg, record.args = _USERINFO.sub(r"\1***@", message), ()
        return True


for _name in ("httpx", "httpcore"):
    logging.getLogger(_name).addFilter(_NoUserinfo())

#: Responses at least this large are decoded with the garbage collector paused (``_gc``).
LARGE_BODY = LARGE_JSON

#: The largest answer a client reads (decoded), unless ``max_response_bytes`` says otherwise:
#: far above any page of the API (a page of 100 items with their agent data is a few MiB).
DEFAULT_MAX_RESPONSE_BYTES = 256 * 2**20

#: The environment variable that sets the response cap, in MiB, when the client is not told.
MAX_RESPONSE_MB_ENV = "PLATFORM_EVAL_MAX_RESPONSE_MB"

#: Header carrying the id that lets a server deduplicate a retried create.
REQUEST_ID_HEADER = "x-platform-eval-request-id"

USER_AGENT = (
    f"platform-eval/{__version__} python/{platform.python_version()} httpx/{httpx.__version__}"
)


@dataclass(frozen=True)
class ApiCall:
    """One logical API call (retries resend the same call)."""

    method: str
    path: str
    params: dict[str, str] = field(default_factory=dict)
    body: Any = None
    resource: str | None = None
    is_create: bool = False
    request_id: str | None = None
    #: A full URL instead of ``path`` under the API root (Cloud Storage downloads).
    url: str | None = None
    #: Bytes to send as they are instead of a JSON ``body`` (a Cloud Storage upload).
    raw: bytes | None = None
    raw_type: str = "application/octet-stream"
    #: The answer's list under this key is kept as text and decoded entry by entry as it is
    #: read (a ``Listing``), not decoded whole: a page of results is large.
    listing: str | None = None

    @property
    def idempotent(self) -> bool:
        # Cancel and patch-with-the-same-body are safe to repeat; a create is not.
        return not self.is_create


@dataclass(frozen=True)
class TransportConfig:
    base_url: str
    api_version: str
    authenticator: Authenticator
    timeout: float
    retry: RetryPolicy
    # Only a server known to deduplicate creates by request id (our emulator) lets a create be
    # retried after it may have reached the server.
    dedupes_creates: bool = False
    #: Non-loopback hosts (host[:port]) a token may reach over plain http: a named emulator.
    trusted_plain_hosts: frozenset[str] = frozenset()
    #: URLs under this prefix (a Cloud Storage emulator) get no token at all.
    anonymous_prefix: str | None = None
    #: An answer larger than this (decoded) is refused rather than read into memory.
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES


class _TransportBase:
    def __init__(self, config: TransportConfig) -> None:
        self.config = config

    def url(self, call: ApiCall) -> str:
        if call.url:
            return call.url
        return f"{self.config.base_url}/{self.config.api_version}/{call.path}"

    def base_headers(self, call: ApiCall) -> dict[str, str]:
        headers = {
            "user-agent": USER_AGENT,
            "x-goog-api-client": f"platform-eval/{__version__}",
            "accept": "application/json",
        }
        if call.is_create:
            headers[REQUEST_ID_HEADER] = call.request_id or str(uuid.uuid4())
        return headers

    def content(self, call: ApiCall) -> bytes | None:
        if call.raw is not None:
            return call.raw
        if call.body is None:
            return None
        try:
            return json.dumps(
                call.body, separators=(",", ":"), ensure_ascii=False, allow_nan=False
            ).encode()
        except ValueError:
            raise errors.InvalidRequestError(
                f"{non_finite_path(call.body) or 'a number'} is NaN or infinite, which JSON "
                "cannot carry "
                f"[{call.method} {call.resource or call.path}]"
            ) from None

    def needs_token(self, call: ApiCall, url: str) -> bool:
        """Whether to add the Authorization header; raises rather than send it in clear text."""
        config = self.config
        if config.authenticator.anonymous:
            return False
        if config.anonymous_prefix and url.startswith(config.anonymous_prefix):
            return False
        if not may_carry_token(url, config.trusted_plain_hosts):
            raise errors.ConfigurationError(
                f"refusing to send credentials in clear text to {httpx.URL(url).host}: use an "
                "https endpoint, or for an emulator on another machine name it in "
                "PLATFORM_EVAL_EMULATOR_HOST"
            )
        return True

    def retry_after_error(self, call: ApiCall, exc: httpx.HTTPError, attempt: int) -> bool:
        if attempt >= self.config.retry.max_retries:
            return False
        if isinstance(exc, NOT_SENT_ERRORS):
            return True
        if isinstance(exc, CONNECTION_ERRORS):
            return call.idempotent or self.config.dedupes_creates
        return False

    def retry_after_status(self, call: ApiCall, status_code: int, attempt: int) -> bool:
        if attempt >= self.config.retry.max_retries or not should_retry_status(status_code):
            return False
        if call.is_create and not self.config.dedupes_creates:
            # 429 is rejected before any processing; anything else may have created the item.
            return status_code == 429
        return True

    def connection_error(
        self, call: ApiCall, exc: httpx.HTTPError, note: str = ""
    ) -> errors.APIConnectionError:
        what = f"{call.method} {call.resource or call.path}"
        if isinstance(exc, httpx.TimeoutException):
            return errors.APITimeoutError(
                f"no answer within the call's {self.config.timeout:g} s timeout [{what}]{note}"
            )
        # The OS's or TLS's own words: "Connection refused", "Name or service not known",
        # "CERTIFICATE_VERIFY_FAILED" tell what to fix; the class name alone does not.
        reason = " ".join(str(exc).split())
        detail = f"{type(exc).__name__}: {reason}" if reason else type(exc).__name__
        return errors.APIConnectionError(
            f"could not reach {shown_url(self.config.base_url)} ({detail}) [{what}]{note}"
        )

    def api_error(
        self, call: ApiCall, response: httpx.Response, note: str = ""
    ) -> errors.GoogleAPICallError:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        error = errors.from_response(
            response.status_code, body, method=call.method, resource=call.resource or call.path
        )
        google_error = isinstance(body, dict) and isinstance(body.get("error"), dict)
        if call.url is None and not google_error:
            # Google APIs and the emulator answer every error as {"error": {...}}: this answer
            # came from something else (a web server on the emulator's port, a proxy).
            kind = response.headers.get("content-type", "").split(";")[0] or "no content type"
            error.message += (
                f" ({shown_url(self.config.base_url)} answered with {kind}, not a Google API "
                "error: it is neither the emulator nor the service, or a proxy stands between)"
            )
        error.message += note
        return error

    def parse(self, call: ApiCall, response: httpx.Response, *, retried: bool) -> Any:
        if response.is_success:
            content = response.content
            if not content:
                return {}
            try:
                if call.listing is not None:
                    return Listing(content.decode("utf-8"), call.listing)
                if len(content) < LARGE_BODY:
                    value = json.loads(content)
                else:
                    with collector_paused():
                        value = json.loads(content)
            except (ValueError, RecursionError) as exc:
                raise self._invalid(call, response, f"a body that is not JSON ({exc})") from None
            # Every API method answers an object; a full URL (Cloud Storage, the emulator's
            # own endpoints) may answer other JSON.
            if call.url is None and not isinstance(value, dict):
                raise self._invalid(call, response, f"a JSON {type(value).__name__}, not an object")
            return value
        if retried and call.method == "DELETE" and response.status_code == 404:
            # An earlier attempt may have deleted it before its response was lost.
            return {}
        raise self.api_error(call, response)

    def request_args(
        self, call: ApiCall, headers: dict[str, str], deadline: float
    ) -> dict[str, Any]:
        url = self.url(call)
        if self.needs_token(call, url):
            # Never applied before the check: the token must not exist in a refused request.
            self.config.authenticator.apply(headers)
        args: dict[str, Any] = {
            "method": call.method,
            "url": url,
            "content": self.content(call),
            "headers": _json_headers(headers, call),
            # Each attempt gets what is left of the call's deadline, never more.
            "timeout": max(deadline - time.monotonic(), 0.001),
        }
        if call.params:
            # httpx replaces the URL's whole query with ``params``, even an empty one.
            args["params"] = call.params
        return args

    def deadline(self) -> float:
        return time.monotonic() + self.config.timeout

    def outcome(
        self,
        call: ApiCall,
        response: httpx.Response | httpx.HTTPError,
        attempt: int,
        started: float,
        deadline: float,
    ) -> Any:
        """What one attempt leads to: a _Retry, the parsed answer, or a raised error."""
        if isinstance(response, httpx.HTTPError):
            self.log(call, type(response).__name__, attempt, started)
            if not self.retry_after_error(call, response, attempt):
                raise self.connection_error(call, response) from None
            delay = self.config.retry.delay(attempt)
            if time.monotonic() + delay < deadline:
                return _Retry(delay)
            raise self.connection_error(call, response, self._past_deadline(delay)) from None
        self.log(call, str(response.status_code), attempt, started)
        if self.retry_after_status(call, response.status_code, attempt):
            # Only error statuses are retried, so giving up always raises.
            delay = self.config.retry.delay(attempt, response.headers.get("retry-after"))
            if time.monotonic() + delay < deadline:
                return _Retry(delay)
            raise self.api_error(call, response, self._past_deadline(delay))
        return self.parse(call, response, retried=attempt > 0)

    def body_started(self, call: ApiCall, response: httpx.Response) -> None:
        """Refuses an answer whose announced length is over the cap before reading any of it."""
        announced = response.headers.get("content-length", "")
        if announced.isdigit() and int(announced) > self.config.max_response_bytes:
            raise self._too_large(call, response, int(announced))

    def body_chunk(
        self,
        call: ApiCall,
        response: httpx.Response,
        body: bytearray,
        chunk: bytes,
        deadline: float,
    ) -> None:
        """Adds one chunk of the answer, within the cap and the call's deadline."""
        body += chunk
        if len(body) > self.config.max_response_bytes:
            raise self._too_large(call, response, None)
        left = deadline - time.monotonic()
        if left <= 0:
            raise httpx.ReadTimeout("the answer was still arriving at the call's deadline")
        # httpcore reads the read timeout from the request's extensions at every read: each
        # read waits at most what is left of the call, so a trickling body ends at the deadline.
        timeouts = response.request.extensions.get("timeout")
        if isinstance(timeouts, dict):
            timeouts["read"] = left

    def read_response(self, response: httpx.Response, body: bytearray) -> httpx.Response:
        """The answer with its body read: decoded, so its content-encoding no longer applies."""
        headers = [
            (k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"
        ]
        return httpx.Response(
            response.status_code, headers=headers, content=bytes(body), request=response.request
        )

    def _too_large(
        self, call: ApiCall, response: httpx.Response, announced: int | None
    ) -> errors.ResponseTooLargeError:
        limit = self.config.max_response_bytes
        size = f"{announced / 2**20:.1f} MiB" if announced is not None else "more than that"
        return errors.ResponseTooLargeError(
            f"{shown_url(self.config.base_url)} answered {call.method} "
            f"{call.resource or call.path} with {size}, over the client's limit of "
            f"{limit / 2**20:g} MiB (max_response_bytes, or {MAX_RESPONSE_MB_ENV})"
        )

    def _invalid(
        self, call: ApiCall, response: httpx.Response, what: str
    ) -> errors.InvalidResponseError:
        shown = response.content[:120].decode("utf-8", "replace")
        return errors.InvalidResponseError(
            f"{shown_url(self.config.base_url)} answered {call.method} "
            f"{call.resource or call.path} with {response.status_code} and {what}: {shown!r}"
        )

    def _past_deadline(self, delay: float) -> str:
        return (
            f" (not retried: waiting {delay:.1f} s for the next attempt would pass the call's "
            f"{self.config.timeout:g} s timeout)"
        )

    def log(self, call: ApiCall, outcome: str, attempt: int, started: float) -> None:
        if _logger.isEnabledFor(logging.DEBUG):
            _logger.debug(
                "%s %s -> %s (attempt %d, %.0f ms)",
                call.method,
                call.path,
                outcome,
                attempt + 1,
                (time.monotonic() - started) * 1000,
            )


@dataclass(frozen=True)
class _Retry:
    delay: float


class SyncTransport(_TransportBase):
    def __init__(self, config: TransportConfig, http_client: httpx.Client | None = None) -> None:
        super().__init__(config)
        self._owns_client = http_client is None
        # Our own client's connections hold every read to the call's deadline (``_deadline``).
        self._http = http_client or httpx.Client(
            timeout=config.timeout, transport=bounded_transport()
        )

    def request(self, call: ApiCall) -> Any:
        call = _with_request_id(call)
        deadline = self.deadline()
        attempt = 0
        while True:
            headers = self.base_headers(call)
            started = time.monotonic()
            try:
                response: httpx.Response | httpx.HTTPError = self._send(
                    call, self.request_args(call, headers, deadline), deadline
                )
            except httpx.HTTPError as exc:
                response = exc
            outcome = self.outcome(call, response, attempt, started, deadline)
            if not isinstance(outcome, _Retry):
                return outcome
            time.sleep(outcome.delay)
            attempt += 1

    def _send(self, call: ApiCall, args: dict[str, Any], deadline: float) -> httpx.Response:
        with deadline_of(deadline), self._http.stream(**args) as response:
            self.body_started(call, response)
            body = bytearray()
            for chunk in response.iter_bytes():
                self.body_chunk(call, response, body, chunk, deadline)
            return self.read_response(response, body)

    @property
    def http_client(self) -> httpx.Client:
        """The connections this transport sends on (shared by ``with_options`` clients)."""
        return self._http

    def close(self) -> None:
        if self._owns_client:
            self._http.close()


class AsyncTransport(_TransportBase):
    def __init__(
        self, config: TransportConfig, http_client: httpx.AsyncClient | None = None
    ) -> None:
        super().__init__(config)
        self._owns_client = http_client is None
        self._http = http_client or httpx.AsyncClient(
            timeout=config.timeout, verify=default_context()
        )

    async def request(self, call: ApiCall) -> Any:
        call = _with_request_id(call)
        deadline = self.deadline()
        attempt = 0
        while True:
            headers = self.base_headers(call)
            if self.config.authenticator.needs_refresh:
                # A token refresh is blocking I/O: keep it off the event loop.
                args = await asyncio.to_thread(self.request_args, call, headers, deadline)
            else:
                args = self.request_args(call, headers, deadline)
            started = time.monotonic()
            try:
                # The event loop can stop an attempt anywhere: the deadline holds for the
                # answer's headers too, however slowly a server sends them.
                async with asyncio.timeout(max(deadline - time.monotonic(), 0.001)):
                    response: httpx.Response | httpx.HTTPError = await self._send(
                        call, args, deadline
                    )
            except TimeoutError:
                response = httpx.ReadTimeout("no complete answer by the call's deadline")
            except httpx.HTTPError as exc:
                response = exc
            outcome = self.outcome(call, response, attempt, started, deadline)
            if not isinstance(outcome, _Retry):
                return outcome
            await asyncio.sleep(outcome.delay)
            attempt += 1

    async def _send(self, call: ApiCall, args: dict[str, Any], deadline: float) -> httpx.Response:
        async with self._http.stream(**args) as response:
            self.body_started(call, response)
            body = bytearray()
            async for chunk in response.aiter_bytes():
                self.body_chunk(call, response, body, chunk, deadline)
            return self.read_response(response, body)

    @property
    def http_client(self) -> httpx.AsyncClient:
        """The connections this transport sends on (shared by ``with_options`` clients)."""
        return self._http

    async def close(self) -> None:
        if self._owns_client:
            await self._http.aclose()


def _with_request_id(call: ApiCall) -> ApiCall:
    # Fixed once per logical call so that every retry carries the same id.
    if call.is_create and not call.request_id:
        return dataclasses.replace(call, request_id=str(uuid.uuid4()))
    return call


def _json_headers(headers: dict[str, str], call: ApiCall) -> dict[str, str]:
    if call.raw is not None:
        headers["content-type"] = call.raw_type
    elif call.body is not None:
        headers["content-type"] = "application/json"
    return headers


def non_finite_path(value: Any, path: str = "body") -> str | None:
    """The JSON path of the first NaN or infinite number in ``value`` (for the error)."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        pairs: Any = ((f"{path}.{key}", child) for key, child in value.items())
    elif isinstance(value, list | tuple):
        pairs = ((f"{path}[{index}]", child) for index, child in enumerate(value))
    else:
        return None
    for child_path, child in pairs:
        found = non_finite_path(child, child_path)
        if found:
            return found
    return None
