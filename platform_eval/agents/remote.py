"""Where a served agent is: its server's URL, the app, and the headers that go with every
request (kept out of every repr, log and message, and never sent in clear text off the
machine). What ``--agent URL`` names; ``served`` runs the cases on it."""

from __future__ import annotations

import base64
import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit, urlunsplit

from ..errors import PlatformEvalError


def on_this_machine(url: str) -> bool:
    """A loopback host (``localhost``, 127.0.0.0/8, ``::1``): what goes there in plain http
    never leaves the machine."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: The longest one user turn may take on the server (its model calls and tools included).
TURN_TIMEOUT = 600.0


class ServedAgentError(PlatformEvalError):
    """The served agent cannot be used as asked (unreachable, no such app, a refusal)."""


#: Where an A2A peer publishes its agent card (and the older name of it).
A2A_CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


def is_a2a_card(spec: object) -> bool:
    """An ``--agent`` that names an A2A peer: the URL of its agent card."""
    if not isinstance(spec, str) or not spec.lower().startswith(("http://", "https://")):
        return False
    return urlsplit(spec).path.rstrip("/").endswith(A2A_CARD_PATHS)


#: An Agent Runtime (Agent Engine) resource: ``projects/P/locations/L/reasoningEngines/ID``.
_RUNTIME_NAME = re.compile(r"projects/[^/]+/locations/([a-z0-9-]+)/reasoningEngines/[^/:?#]+")
_RUNTIME_PATH = re.compile(r"/projects/[^/]+/locations/[^/]+/reasoningEngines/[^/:?#]+$")


def agent_runtime_url(spec: object) -> str | None:
    """The REST URL of the Agent Runtime ``spec`` names, by its resource name (its region's
    endpoint, v1beta1) or by that URL; None when it names none."""
    if not isinstance(spec, str):
        return None
    if spec.lower().startswith(("http://", "https://")):
        path = urlsplit(spec).path.rstrip("/")
        return spec.rstrip("/") if _RUNTIME_PATH.search(path) else None
    found = _RUNTIME_NAME.fullmatch(spec.strip("/"))
    if found is None:
        return None
    return f"https://{found.group(1)}-aiplatform.googleapis.com/v1beta1/{spec.strip('/')}"


def is_agent_url(spec: object) -> bool:
    """An ``--agent`` that names a served agent: an http(s) URL that is no A2A agent card (ADK's
    api_server, or an Agent Runtime's URL), or an Agent Runtime's resource name."""
    is_url = isinstance(spec, str) and spec.lower().startswith(("http://", "https://"))
    return (is_url and not is_a2a_card(spec)) or agent_runtime_url(spec) is not None


@dataclass(frozen=True)
class ServedAgent:
    """Where a served agent is: its server's base URL, the app (None: the one the server
    lists), and headers for every request (auth; kept out of every repr, log and message)."""

    url: str
    app_name: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    turn_timeout: float = TURN_TIMEOUT

    def __post_init__(self) -> None:
        # An Agent Runtime's resource name is reached at its region's endpoint.
        object.__setattr__(self, "url", agent_runtime_url(self.url) or self.url)
        bare, user, password = _without_userinfo(self.url)
        if bare != self.url:
            # A password in the URL is a credential like a header: sent as Basic auth, under
            # the same clear-text rule, and never shown (the URL is shown without it).
            headers = dict(self.headers)
            if "authorization" not in {name.lower() for name in headers}:
                headers["Authorization"] = _basic(user, password)
            object.__setattr__(self, "url", bare)
            object.__setattr__(self, "headers", headers)
        check_header_values(self.headers)
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ServedAgentError(f"--agent {self.url}: expected an http(s) URL of a server")
        if self.headers and parts.scheme == "http" and not on_this_machine(self.url):
            # An Authorization header read off the network is a credential given away.
            raise ServedAgentError(
                f"--agent {self.url}: headers would travel in clear text to {parts.hostname}; "
                "use its https URL"
            )
        object.__setattr__(self, "url", self.url.rstrip("/"))

    @property
    def is_runtime(self) -> bool:
        """An Agent Runtime: sessions and turns through its ``:query`` and ``:streamQuery``
        methods (the class methods the official SDK's ``run_inference`` calls, read from its
        source; not run beside ours), not the api_server's."""
        return _RUNTIME_PATH.search(urlsplit(self.url).path) is not None

    @property
    def spec(self) -> str:
        return f"{self.url} (app {self.app_name})" if self.app_name else self.url


def parse_headers(given: Sequence[str]) -> dict[str, str]:
    """``--agent-header 'Name: value'`` options as headers (ValueError naming a bad one, by its
    name only: its value may be a secret)."""
    headers: dict[str, str] = {}
    for raw in given:
        name, sep, value = raw.partition(":")
        if not sep or not name.strip() or any(c.isspace() for c in name.strip()):
            shown = name.strip()[:40] or "(empty)"
            raise ValueError(f"--agent-header {shown}...: expected 'Name: value'")
        headers[name.strip()] = value.strip()
    check_header_values(headers)
    return headers


def check_header_values(headers: Mapping[str, str]) -> None:
    """ValueError naming (by its name only) a header whose value could end the header early:
    a CR, LF or other control character."""
    for name, value in headers.items():
        if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in str(value)):
            raise ValueError(
                f"--agent-header {name}: its value holds a line break or another control "
                "character, which no header may carry"
            )


def _without_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its ``user:password@``, and the two (None where absent)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None, None
    netloc = parts.netloc.rpartition("@")[2]
    return (
        urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)),
        (parts.username),
        parts.password,
    )


def _basic(user: str | None, password: str | None) -> str:
    pair = f"{unquote(user or '')}:{unquote(password or '')}"
    return "Basic " + base64.b64encode(pair.encode()).decode()
