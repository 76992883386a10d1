"""Who may talk to the emulator: with an auth token, only callers that send it.

An emulator bound to loopback is only reachable from this machine. One bound anywhere else is
reachable by anyone who can reach the machine, so it takes a token (``--auth-token``) that every
request, control routes and Cloud Storage routes included, must carry as a bearer token.
"""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from .._auth import is_loopback
from ._asgi import send_rpc_error


def exposure_warning(host: str, auth_token: str | None) -> str | None:
    """What to tell the user who binds ``host``; None for a loopback address."""
    if is_loopback(host):
        return None
    if auth_token:
        return (
            f"warning: serving on {host}, beyond this machine; requests need the auth token, "
            "but it and all data travel in clear text (http): use a trusted network"
        )
    return (
        f"warning: serving on {host}, beyond this machine, without --auth-token: anyone who "
        "can reach it can read and change every project's data"
    )


#: The challenge as Google's APIs send it (RFC 6750), which clients such as httplib2 parse.
_CHALLENGE = [
    (b"www-authenticate", b'Bearer realm="platform-eval emulator", error="invalid_token"')
]
#: The google.rpc details Google's APIs give a request without valid credentials.
_DETAILS = [
    {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "CREDENTIALS_MISSING",
        "domain": "googleapis.com",
        "metadata": {"service": "aiplatform.googleapis.com"},
    }
]


class RequireToken:
    """ASGI middleware answering 401 UNAUTHENTICATED to requests without the token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            message = "the emulator requires its auth token as a bearer token"
            await send_rpc_error(send, 401, "UNAUTHENTICATED", message, _CHALLENGE, _DETAILS)
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                return hmac.compare_digest(value, self._expected)
        return False
