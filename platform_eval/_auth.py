"""Credentials: google-auth refresh over httpx, and the anonymous mode used with emulators."""

from __future__ import annotations

import functools
import ipaddress
import re
import threading
from collections.abc import Mapping
from typing import Any

import httpx
from google.auth import credentials as ga_credentials
from google.auth import exceptions as ga_exceptions
from google.auth import transport as ga_transport

from ._tls import default_context


class _AuthResponse(ga_transport.Response):
    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    @property
    def data(self) -> bytes:
        return self._response.content


class HttpxAuthRequest(ga_transport.Request):
    """google-auth's transport interface over an httpx client (used to refresh tokens)."""

    def __init__(self, client: httpx.Client | None = None) -> None:
        self._client = client or httpx.Client(timeout=30.0, verify=default_context())

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> _AuthResponse:
        try:
            response = self._client.request(
                method, url, content=body, headers=headers, timeout=timeout or 30.0
            )
        except httpx.HTTPError as exc:
            raise ga_exceptions.TransportError(
                f"token request failed: {type(exc).__name__}"
            ) from None
        return _AuthResponse(response)


class Authenticator:
    """Adds an Authorization header, refreshing the credentials when they expire.

    Thread-safe: a refresh is done by one caller at a time.
    """

    def __init__(self, credentials: ga_credentials.Credentials | None) -> None:
        self._credentials = credentials
        self._lock = threading.Lock()
        self._request: HttpxAuthRequest | None = None

    @property
    def anonymous(self) -> bool:
        return self._credentials is None or isinstance(
            self._credentials, ga_credentials.AnonymousCredentials
        )

    @property
    def needs_refresh(self) -> bool:
        return not self.anonymous and not self._credentials.valid  # type: ignore[union-attr]

    def apply(self, headers: dict[str, str]) -> None:
        """Sets the auth headers in place (may block on a token refresh)."""
        if self.anonymous:
            return
        creds = self._credentials
        assert creds is not None
        with self._lock:
            if not creds.valid:
                if self._request is None:
                    self._request = HttpxAuthRequest()
                creds.refresh(self._request)
            creds.apply(headers)
            quota_project = getattr(creds, "quota_project_id", None)
            if quota_project:
                headers.setdefault("x-goog-user-project", quota_project)

    def __repr__(self) -> str:
        kind = "anonymous" if self.anonymous else type(self._credentials).__name__
        return f"Authenticator({kind})"


def bearer_credentials(token: str) -> ga_credentials.Credentials:
    """Credentials that send a fixed bearer token (an emulator's ``--auth-token``)."""
    from google.oauth2.credentials import Credentials

    return Credentials(token=token)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def may_carry_token(url: str, trusted_plain_hosts: frozenset[str]) -> bool:
    """Whether a bearer token may travel with a request to ``url``.

    Only over https, or in clear text to a loopback address or an emulator the user named
    (``PLATFORM_EVAL_EMULATOR_HOST``): anything else would send it readable off the machine.
    """
    origin = _ORIGIN.match(url)
    return _origin_may_carry_token(origin.group(0) if origin else url, trusted_plain_hosts)


#: scheme://host[:port] of a URL: the decision depends on nothing else, so it is made once per
#: origin rather than parsed again on every request.
_ORIGIN = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")


@functools.lru_cache(maxsize=64)
def _origin_may_carry_token(origin: str, trusted_plain_hosts: frozenset[str]) -> bool:
    parsed = httpx.URL(origin)
    if parsed.scheme == "https":
        return True
    if parsed.scheme != "http":
        return False
    host_port = f"{parsed.host}:{parsed.port}" if parsed.port else parsed.host
    return is_loopback(parsed.host) or host_port.lower() in trusted_plain_hosts
