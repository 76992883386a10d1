"""Errors raised by platform-eval.

API errors are the classes of ``google.api_core.exceptions`` (``NotFound``, ``InvalidArgument``,
``AlreadyExists``, ...), so code that already catches them for other Google clients works here
too. One function, :func:`from_response`, maps an HTTP status and a google.rpc error body to a
class; the google.rpc status name wins over the HTTP code because it is more specific
(``INVALID_ARGUMENT`` and ``FAILED_PRECONDITION`` are both HTTP 400).
"""

from __future__ import annotations

import html
import re
from typing import Any

from google.api_core import exceptions as core
from google.api_core.exceptions import (
    AlreadyExists,
    BadRequest,
    Conflict,
    DeadlineExceeded,
    FailedPrecondition,
    Forbidden,
    GoogleAPICallError,
    GoogleAPIError,
    InternalServerError,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    ServiceUnavailable,
    TooManyRequests,
    Unauthenticated,
    Unauthorized,
)

from .types.status import Status

__all__ = [
    "APIConnectionError",
    "APITimeoutError",
    "AlreadyExists",
    "BadRequest",
    "ConfigurationError",
    "Conflict",
    "DeadlineExceeded",
    "FailedPrecondition",
    "Forbidden",
    "GoogleAPICallError",
    "GoogleAPIError",
    "InternalServerError",
    "InvalidArgument",
    "InvalidRequestError",
    "InvalidResponseError",
    "NotFound",
    "PermissionDenied",
    "PlatformEvalError",
    "RepeatedPageTokenError",
    "ResourceExhausted",
    "ResponseTooLargeError",
    "ServiceUnavailable",
    "TooManyRequests",
    "Unauthenticated",
    "Unauthorized",
    "WaitTimeoutError",
    "from_response",
    "from_status",
]

_BY_RPC_STATUS: dict[str, type[GoogleAPICallError]] = {
    "CANCELLED": core.Cancelled,
    "UNKNOWN": core.Unknown,
    "INVALID_ARGUMENT": core.InvalidArgument,
    "DEADLINE_EXCEEDED": core.DeadlineExceeded,
    "NOT_FOUND": core.NotFound,
    "ALREADY_EXISTS": core.AlreadyExists,
    "PERMISSION_DENIED": core.PermissionDenied,
    "UNAUTHENTICATED": core.Unauthenticated,
    "RESOURCE_EXHAUSTED": core.ResourceExhausted,
    "FAILED_PRECONDITION": core.FailedPrecondition,
    "ABORTED": core.Aborted,
    "OUT_OF_RANGE": core.OutOfRange,
    "UNIMPLEMENTED": core.MethodNotImplemented,
    "INTERNAL": core.InternalServerError,
    "UNAVAILABLE": core.ServiceUnavailable,
    "DATA_LOSS": core.DataLoss,
}


class PlatformEvalError(Exception):
    """Base of the errors platform-eval defines itself (not API status errors)."""


class ConfigurationError(PlatformEvalError, ValueError):
    """The client cannot be configured: no project, conflicting options, a bad endpoint."""


class InvalidRequestError(PlatformEvalError, ValueError):
    """The client refuses to send a request: a value JSON cannot carry (NaN, Infinity)."""


class InvalidResponseError(PlatformEvalError):
    """The server answered with a body that is not what the API answers (not JSON, or not a
    JSON object)."""


class ResponseTooLargeError(InvalidResponseError):
    """The server's answer is larger than the client reads (``max_response_bytes``)."""


class RepeatedPageTokenError(PlatformEvalError):
    """The server answered a page token it had already given: following it would loop."""


class APIConnectionError(GoogleAPIError):
    """The service could not be reached, or the connection broke before a full response."""


class TargetUnreachableError(APIConnectionError):
    """A bulk job stopped because its target stopped answering: after one item's retries, not
    after every remaining item's. What was done is kept; the same job again resumes."""


class APITimeoutError(APIConnectionError):
    """The request timed out."""


class WaitTimeoutError(PlatformEvalError, TimeoutError):
    """``wait_for_run`` gave up before the run reached a terminal state."""

    def __init__(self, message: str, *, run: Any = None) -> None:
        super().__init__(message)
        self.run = run


def from_response(
    status_code: int,
    body: Any,
    *,
    method: str,
    resource: str | None,
) -> GoogleAPICallError:
    """Builds the exception for an error response.

    The message carries the server's message and the resource the call was about, never
    request headers (which hold the bearer token).
    """
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = {}
    server_message = error.get("message") or _fallback_message(status_code, body)
    given = error.get("details")
    details: list[Any] = given if isinstance(given, list) else []
    rpc_status = error.get("status")
    where = f" [{method} {resource}]" if resource else f" [{method}]"
    message = f"{server_message}{where}"
    # AIP-193's ErrorInfo gives the exception its ``reason``, ``domain`` and ``metadata``.
    error_info = next(
        (
            d
            for d in details
            if isinstance(d, dict) and d.get("@type") == "type.googleapis.com/google.rpc.ErrorInfo"
        ),
        None,
    )
    cls = _BY_RPC_STATUS.get(rpc_status) if isinstance(rpc_status, str) else None
    if cls is not None:
        exc: GoogleAPICallError = cls(message, details=details, error_info=error_info)
        exc.code = status_code  # keep the HTTP code; the class tells the rpc status
    else:
        exc = core.from_http_status(status_code, message, details=details, error_info=error_info)
    exc.resource = resource  # type: ignore[attr-defined]
    exc.rpc_status = rpc_status  # type: ignore[attr-defined]
    return exc


_PAGE_HEAD = re.compile(r"<(head|style|script)\b.*?</\1\s*>|<!DOCTYPE[^>]*>", re.I | re.S)
_MARKUP = re.compile(r"<[^>]*>")


def _fallback_message(status_code: int, body: Any) -> str:
    if isinstance(body, str) and body.strip():
        if body.lstrip().startswith("<"):
            # A web page (a proxy's, another server's): its words, not its markup.
            words = " ".join(_MARKUP.sub(" ", _PAGE_HEAD.sub(" ", body)).split())
            return html.unescape(words)[:200] or f"HTTP {status_code}"
        snippet = body.strip().splitlines()[0]
        return snippet[:200]
    return f"HTTP {status_code}"


#: google.rpc.Code numbers, as a long-running operation's ``error.code`` carries them.
_RPC_STATUS_BY_CODE = {
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}


#: The other way round: a google.rpc status name's code.
RPC_CODES = {name: code for code, name in _RPC_STATUS_BY_CODE.items()}


def from_status(status: Status, *, resource: str | None) -> GoogleAPICallError:
    """The exception for a google.rpc.Status (a failed long-running operation's ``error``)."""
    code = status.code
    rpc_status = _RPC_STATUS_BY_CODE.get(code) if code is not None else None
    message = status.message or f"the operation failed (code {code})"
    details = status.details or []
    where = f" [{resource}]" if resource else ""
    cls = _BY_RPC_STATUS.get(rpc_status or "", core.Unknown)
    exc = cls(f"{message}{where}", details=details)
    exc.resource = resource  # type: ignore[attr-defined]
    exc.rpc_status = rpc_status  # type: ignore[attr-defined]
    return exc
