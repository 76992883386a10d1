"""Which failures of a model call no retry mends: the model is not there (404), no access (401,
403), no route to the endpoint, no credentials. The judge and the agent runs stop on them at
once rather than meeting the same failure call after call."""

from __future__ import annotations

import ssl
from typing import Any

#: Words of google-genai's error when no API key or project is set.
_NO_CREDENTIALS = ("Missing key inputs argument", "API key", "default credentials")


#: What a model answers when it is over its quota (429) or unavailable for now (503).
BUSY_STATUSES = (429, 503)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a model error (google-genai's ``code``, LiteLLM's ``status_code``)."""
    for name in ("code", "status_code"):
        value = getattr(exc, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def retry_after(exc: BaseException) -> float | None:
    """The seconds a model error's answer asks to wait (its ``Retry-After``), or None."""
    from ._retry import parse_retry_after

    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    return parse_retry_after(value) if isinstance(value, str) else None


def unusable_model(exc: BaseException) -> bool:
    """True when ``exc`` says the model cannot be reached or used at all, whatever the call."""
    import httpx

    if status_of(exc) in (401, 403, 404):
        return True
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | ConnectionError):
        return True
    if isinstance(exc, ssl.SSLCertVerificationError):  # a certificate no call will trust
        return True
    if _handshake_status(exc) in (401, 403, 404):
        return True
    try:
        import aiohttp  # google-genai's async transport, when installed
    except ImportError:
        pass
    else:
        if isinstance(exc, aiohttp.ClientConnectorError):  # refused, no such host, no route
            return True
    try:
        from google.auth.exceptions import DefaultCredentialsError
    except ImportError:  # pragma: no cover - google-auth is a dependency
        return False
    if isinstance(exc, DefaultCredentialsError):
        return True
    return isinstance(exc, ValueError) and any(words in str(exc) for words in _NO_CREDENTIALS)


def _handshake_status(exc: BaseException) -> int | None:
    """The status a Live socket's refused handshake was answered with (websockets'
    ``InvalidStatus``), else None."""
    try:
        from websockets.exceptions import InvalidStatus
    except ImportError:  # no Live model without websockets
        return None
    return exc.response.status_code if isinstance(exc, InvalidStatus) else None


def answer_text(exc: BaseException) -> str | None:
    """A model's error answer as ``429 RESOURCE_EXHAUSTED: <its message>`` (google-genai's
    APIError: its HTTP code, status and the server's message); None for any other error."""
    code, status, message = (getattr(exc, name, None) for name in ("code", "status", "message"))
    if not isinstance(code, int) or not isinstance(message, str) or not message:
        return None
    head = f"{code} {status}" if isinstance(status, str) and status else str(code)
    return f"{head}: {' '.join(message.split())}"


def failure_text(exc: BaseException) -> str:
    """``exc`` in one line: its type and message, without what only clutters it (aiohttp's
    connection error prints its TLS context object; google-genai's API error ends with the
    answer's whole JSON as a Python dict, its message and details in it again)."""
    answered = answer_text(exc)
    if answered is not None:
        return f"{type(exc).__name__}: {answered}"
    host, port = getattr(exc, "host", None), getattr(exc, "port", None)
    cause = getattr(exc, "os_error", None)
    if host and isinstance(cause, OSError):
        # asyncio words a refusal "Connect call failed (host, port)".
        refused = isinstance(cause, ConnectionRefusedError)
        reason = "connection refused" if refused else cause.strerror or str(cause)
        return f"{type(exc).__name__}: cannot connect to {host}:{port}: {reason}"
    request = _request_of(exc)
    os_error = _os_error_in(exc)
    if request is not None and os_error is not None:
        # httpx words a refusal "All connection attempts failed"; its cause says which.
        url = request.url
        refused = isinstance(os_error, ConnectionRefusedError)
        reason = "connection refused" if refused else os_error.strerror or str(os_error)
        return f"{type(exc).__name__}: cannot connect to {url.host}:{url.port}: {reason}"
    return f"{type(exc).__name__}: {exc}"


def _request_of(exc: BaseException) -> Any:
    """The httpx request an httpx error was for, or None (``.request`` raises when unset)."""
    try:
        return getattr(exc, "request", None)
    except RuntimeError:
        return None


def _os_error_in(exc: BaseException) -> OSError | None:
    """The deepest OSError an error was raised from (its causes, a few deep: anyio's "All
    connection attempts failed" comes from the refusal itself), or None."""
    found: OSError | None = None
    seen: BaseException | None = exc
    for _ in range(8):
        seen = seen.__cause__ or seen.__context__ if seen is not None else None
        if seen is None:
            break
        if isinstance(seen, ExceptionGroup):
            seen = next((e for e in seen.exceptions if isinstance(e, OSError)), seen)
        if isinstance(seen, OSError):
            found = seen
    return found
