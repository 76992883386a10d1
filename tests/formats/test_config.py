from __future__ import annotations

import pytest

from platform_eval import Client, errors
from platform_eval._config import resolve_settings


def _resolve(**kwargs):  # type: ignore[no-untyped-def]
    defaults = dict(
        project=None, location=None, credentials=None, api_endpoint=None, api_version="v1beta1"
    )
    environ = kwargs.pop("environ", {})
    return resolve_settings(**{**defaults, **kwargs}, environ=environ)


def test_emulator_host_env_gives_anonymous_client_and_default_project() -> None:
    settings = _resolve(environ={"PLATFORM_EVAL_EMULATOR_HOST": "127.0.0.1:9999"})
    assert settings.emulator and settings.credentials is None
    assert settings.base_url == "http://127.0.0.1:9999"
    assert settings.parent == "projects/local-project/locations/us-central1"


def test_http_endpoint_means_emulator() -> None:
    settings = _resolve(
        api_endpoint="http://localhost:1234/", project="mine", location="europe-west4"
    )
    assert settings.emulator
    assert settings.base_url == "http://localhost:1234"
    assert settings.parent == "projects/mine/locations/europe-west4"


def test_environment_project_and_location() -> None:
    from google.auth.credentials import AnonymousCredentials

    settings = _resolve(
        credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
        environ={"GOOGLE_CLOUD_PROJECT": "env-proj", "GOOGLE_CLOUD_LOCATION": "asia-northeast1"},
    )
    assert not settings.emulator
    assert settings.parent == "projects/env-proj/locations/asia-northeast1"
    assert settings.base_url == "https://asia-northeast1-aiplatform.googleapis.com"


def test_arguments_win_over_environment() -> None:
    from google.auth.credentials import AnonymousCredentials

    settings = _resolve(
        project="arg",
        location="global",
        credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
        environ={"GOOGLE_CLOUD_PROJECT": "env", "GOOGLE_CLOUD_LOCATION": "us-east1"},
    )
    assert settings.parent == "projects/arg/locations/global"
    assert settings.base_url == "https://aiplatform.googleapis.com"


def test_endpoint_without_scheme_is_https() -> None:
    from google.auth.credentials import AnonymousCredentials

    settings = _resolve(
        project="p",
        api_endpoint="us-central1-aiplatform.googleapis.com",
        credentials=AnonymousCredentials(),
    )  # type: ignore[no-untyped-call]
    assert settings.base_url == "https://us-central1-aiplatform.googleapis.com"
    with pytest.raises(errors.ConfigurationError, match="http:// or https://"):
        _resolve(project="p", api_endpoint="ftp://x")


def test_no_credentials_is_a_clear_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    monkeypatch.delenv("PLATFORM_EVAL_EMULATOR_HOST", raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    with pytest.raises(errors.ConfigurationError, match="gcloud auth application-default login"):
        Client("p")


def _user_adc(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    key = tmp_path / "adc.json"
    key.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "c",
                "client_secret": "s",
                "refresh_token": "r-secret",
            }
        )
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))  # no gcloud default project
    monkeypatch.delenv("PLATFORM_EVAL_EMULATOR_HOST", raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)


def test_adc_credentials_with_project_from_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    _user_adc(monkeypatch, tmp_path)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "env-proj")
    client = Client()
    assert client.project == "env-proj"
    assert not client.is_emulator
    assert "r-secret" not in repr(client)


def test_adc_without_any_project_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    _user_adc(monkeypatch, tmp_path)
    with pytest.raises(errors.ConfigurationError, match="no Google Cloud project"):
        Client()


def test_client_from_emulator_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLATFORM_EVAL_EMULATOR_HOST", "127.0.0.1:5555")
    with Client() as client:
        assert client.is_emulator and client.api_endpoint == "http://127.0.0.1:5555"
        assert client.project == "local-project"


def test_negative_retries_rejected() -> None:
    with pytest.raises(ValueError):
        Client(api_endpoint="http://127.0.0.1:1", max_retries=-1)
