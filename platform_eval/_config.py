"""Where the client talks to, as whom, and for which project and location.

Order of precedence, as in google-cloud-python: explicit arguments, then the environment
(``GOOGLE_CLOUD_PROJECT``, ``GOOGLE_CLOUD_LOCATION``, ``PLATFORM_EVAL_EMULATOR_HOST``), then
Application Default Credentials. An emulator endpoint (``PLATFORM_EVAL_EMULATOR_HOST`` or an
``http://`` ``api_endpoint``) uses anonymous credentials and a placeholder project.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.auth import credentials as ga_credentials

from .errors import ConfigurationError

EMULATOR_HOST_ENV = "PLATFORM_EVAL_EMULATOR_HOST"
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

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.location}"


def service_base_url(location: str) -> str:
    if location == "global":
        return "https://aiplatform.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


def _normalize_endpoint(endpoint: str) -> str:
    endpoint = endpoint.strip().rstrip("/")
    if not endpoint:
        raise ConfigurationError("api_endpoint is empty")
    if "://" not in endpoint:
        endpoint = f"https://{endpoint}"
    scheme = endpoint.split("://", 1)[0]
    if scheme not in ("http", "https"):
        raise ConfigurationError(f"api_endpoint must be http:// or https://, got {scheme}://")
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

    emulator_host = env.get(EMULATOR_HOST_ENV, "").strip()
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
        return Settings(
            project=project or env.get("GOOGLE_CLOUD_PROJECT") or EMULATOR_PROJECT,
            location=location,
            base_url=base_url,
            api_version=api_version,
            credentials=credentials,  # normally None: the emulator takes anonymous calls
            emulator=True,
            storage_url=base_url,  # the emulator serves the Cloud Storage subset too
        )

    project = project or env.get("GOOGLE_CLOUD_PROJECT")
    if credentials is None:
        credentials, adc_project = _application_default_credentials()
        project = project or adc_project
    if not project:
        raise ConfigurationError(
            "no Google Cloud project: pass project=..., set GOOGLE_CLOUD_PROJECT, or run "
            "`gcloud config set project ...`; to work offline, start the emulator and set "
            f"{EMULATOR_HOST_ENV}=host:port"
        )
    return Settings(
        project=project,
        location=location,
        base_url=base_url,
        api_version=api_version,
        credentials=credentials,
        emulator=False,
        storage_url=_storage_url(env),
    )


def _storage_url(env: Mapping[str, str]) -> str:
    host = env.get("STORAGE_EMULATOR_HOST", "").strip().rstrip("/")
    if not host:
        return "https://storage.googleapis.com"
    return host if "://" in host else f"http://{host}"


def _application_default_credentials() -> tuple[Any, str | None]:
    import google.auth
    from google.auth import exceptions as ga_exceptions

    try:
        return google.auth.default(scopes=SCOPES)
    except ga_exceptions.DefaultCredentialsError as exc:
        raise ConfigurationError(
            "no Google Cloud credentials found (Application Default Credentials): run "
            "`gcloud auth application-default login`, pass credentials=..., or point the "
            f"client at an emulator with {EMULATOR_HOST_ENV}. ({exc})"
        ) from None
