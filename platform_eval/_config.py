"""Where the client talks to, as whom, and for which project and location.

Order of precedence, as in google-cloud-python: explicit arguments, then the environment
(``GOOGLE_CLOUD_PROJECT``, ``GOOGLE_CLOUD_LOCATION``, ``PLATFORM_EVAL_EMULATOR_HOST``), then
Application Default Credentials. An emulator endpoint (``PLATFORM_EVAL_EMULATOR_HOST`` or an
``http://`` ``api_endpoint``) uses anonymous credentials and a placeholder project.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.auth import credentials as ga_credentials

from ._auth import bearer_credentials
from .errors import ConfigurationError

EMULATOR_HOST_ENV = "PLATFORM_EVAL_EMULATOR_HOST"
#: The bearer token of an emulator started with --auth-token.
EMULATOR_TOKEN_ENV = "PLATFORM_EVAL_EMULATOR_TOKEN"
DEFAULT_LOCATION = "us-central1"
EMULATOR_PROJECT = "local-project"
SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


@dataclass(frozen=True)
class Settings:
    project: str
    location: str
    base_url: str
    api_version: str
    credentials: ga_credentials.Credentials | None
    emulator: bool
    storage_url: str = "https://storage.googleapis.com"
    #: host[:port] an emulator was named by (PLATFORM_EVAL_EMULATOR_HOST): the only non-loopback
    #: hosts a token may reach over plain http.
    trusted_plain_hosts: frozenset[str] = frozenset()
    #: Cloud Storage is an emulator (STORAGE_EMULATOR_HOST): its requests carry no token.
    storage_emulator: bool = False

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.location}"


# Project ids (AIP-122: lowercase letters, digits, hyphens), project numbers, and the
# domain-scoped ids of older projects ("example.com:my-project").
_PROJECT = re.compile(r"^(?:[a-z0-9][a-z0-9.-]{0,62}:)?[a-z0-9][a-z0-9-]{0,62}$")
_LOCATION = re.compile(r"^[a-z][a-z0-9-]{0,62}$")


# Both end up in URLs and resource names: anything but an id is refused before any request
# (``location="host:port/x#"`` would otherwise choose the host the token goes to).


def shown_url(url: str) -> str:
    """``url`` as messages and reprs show it: without a user and password (``http://u:p@h``
    would carry the password into errors and logs)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    if "@" in host:
        host = "***@" + host.rsplit("@", 1)[1]
    return f"{scheme}://{host}{slash}{path}"


def validate_project(project: str) -> None:
    if not isinstance(project, str) or not _PROJECT.match(project):
        raise ConfigurationError(
            f"project {project!r} is not a Google Cloud project id or number (lowercase "
            "letters, digits and hyphens)"
        )


def validate_location(location: str) -> None:
    if not isinstance(location, str) or not _LOCATION.match(location):
        raise ConfigurationError(
            f"location {location!r} is not a Google Cloud location such as us-central1 or global"
        )


def service_base_url(location: str) -> str:
    if location == "global":
        return "https://aiplatform.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


#: A host name, an IPv4 address or a bracketed IPv6 one (urlsplit drops the brackets).
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|[0-9A-Fa-f:.]+")


def _normalize_endpoint(endpoint: str) -> str:
    endpoint = endpoint.strip().rstrip("/")
    if not endpoint:
        raise ConfigurationError("api_endpoint is empty")
    if "://" not in endpoint:
        endpoint = f"https://{endpoint}"
    scheme = endpoint.split("://", 1)[0]
    if scheme not in ("http", "https"):
        raise ConfigurationError(f"api_endpoint must be http:// or https://, got {scheme}://")
    parts = urllib.parse.urlsplit(endpoint)
    try:
        port = parts.port
    except ValueError:
        port = -1
    host = parts.hostname or ""
    if host in ("http", "https") and parts.path.startswith("//"):
        raise ConfigurationError(
            f"endpoint {shown_url(endpoint)!r}: a ':' is missing after {host} "
            f"(did you mean {host}:{parts.path}?)"
        )
    if not host or port == -1 or parts.query or parts.fragment or not _HOST.fullmatch(host):
        raise ConfigurationError(
            f"endpoint {shown_url(endpoint)!r} is not a host[:port] or an http(s) URL of one "
            "(e.g. localhost:8765, http://127.0.0.1:8765)"
        )
    return endpoint


def resolve_settings(
    *,
    project: str | None,
    location: str | None,
    credentials: ga_credentials.Credentials | None,
    api_endpoint: str | None,
    api_version: str,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    env = os.environ if environ is None else environ
    location = location or env.get("GOOGLE_CLOUD_LOCATION") or DEFAULT_LOCATION
    validate_location(location)
    if project is not None:
        validate_project(project)

    emulator_host = env.get(EMULATOR_HOST_ENV, "").strip()
    trusted = frozenset({_host_port(emulator_host)} if emulator_host else set())
    if api_endpoint:
        base_url = _normalize_endpoint(api_endpoint)
        emulator = base_url.startswith("http://")
    elif emulator_host:
        base_url = _normalize_endpoint(
            emulator_host if "://" in emulator_host else f"http://{emulator_host}"
        )
        emulator = True
    else:
        base_url = service_base_url(location)
        emulator = False

    if emulator:
        project = project or env.get("GOOGLE_CLOUD_PROJECT") or EMULATOR_PROJECT
        validate_project(project)
        return Settings(
            project=project,
            location=location,
            base_url=base_url,
            api_version=api_version,
            # Normally none: the emulator takes anonymous calls unless it has an auth token.
            credentials=credentials or _emulator_token(env),
            emulator=True,
            storage_url=base_url,  # the emulator serves the Cloud Storage subset too
            trusted_plain_hosts=trusted,
        )

    project = project or env.get("GOOGLE_CLOUD_PROJECT")
    if credentials is None:
        # An https endpoint of the user's is a service (a private one, a regional one): it
        # takes Google credentials, and the emulator serves plain http.
        hint = (
            f"; {base_url} is https, so it is taken for the service: an emulator there is "
            "reached over http (http://host:port, or host:port)"
            if api_endpoint
            else ""
        )
        credentials, adc_project = _application_default_credentials(hint)
        project = project or adc_project
    if not project:
        raise ConfigurationError(
            "no Google Cloud project: pass project=..., set GOOGLE_CLOUD_PROJECT, or run "
            "`gcloud config set project ...`; to work offline, start the emulator and set "
            f"{EMULATOR_HOST_ENV}=host:port"
        )
    validate_project(project)
    return Settings(
        project=project,
        location=location,
        base_url=base_url,
        api_version=api_version,
        credentials=credentials,
        emulator=False,
        storage_url=_storage_url(env),
        trusted_plain_hosts=trusted,
        storage_emulator=bool(env.get("STORAGE_EMULATOR_HOST", "").strip()),
    )


def _emulator_token(env: Mapping[str, str]) -> ga_credentials.Credentials | None:
    token = env.get(EMULATOR_TOKEN_ENV, "").strip()
    return bearer_credentials(token) if token else None


def _host_port(host: str) -> str:
    host = host.strip().rstrip("/").lower()
    return host.split("://", 1)[1] if "://" in host else host


def _storage_url(env: Mapping[str, str]) -> str:
    host = env.get("STORAGE_EMULATOR_HOST", "").strip().rstrip("/")
    if not host:
        return "https://storage.googleapis.com"
    return host if "://" in host else f"http://{host}"


def _application_default_credentials(hint: str = "") -> tuple[Any, str | None]:
    import google.auth
    from google.auth import exceptions as ga_exceptions

    try:
        return google.auth.default(scopes=SCOPES)
    except ga_exceptions.DefaultCredentialsError as exc:
        raise ConfigurationError(
            "no Google Cloud credentials found (Application Default Credentials): run "
            "`gcloud auth application-default login`, pass credentials=..., or point the "
            f"client at an emulator with {EMULATOR_HOST_ENV}{hint}. ({exc})"
        ) from None
