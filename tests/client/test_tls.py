"""Every connection pool shares one TLS context, built by httpx's own rules: verification on,
and the CA bundle the environment names."""

from __future__ import annotations

import ssl
from typing import Any

import certifi
import pytest

from platform_eval import Client
from platform_eval._tls import default_context


def test_the_shared_context_verifies_servers() -> None:
    context = default_context()
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context is default_context()  # built once


def test_a_client_and_its_async_twin_share_it() -> None:
    with Client("p", api_endpoint="http://127.0.0.1:9") as client:
        twin = client.to_async()
        transports: list[Any] = [
            client._transport._http._transport,
            twin._transport._http._transport,
        ]
        pools = [transport._pool for transport in transports]
        assert all(pool._ssl_context is default_context() for pool in pools)


def test_the_ca_bundle_the_environment_names_gets_its_own_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    usual = default_context()
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    named = default_context()
    assert named is not usual
    assert named.verify_mode is ssl.CERT_REQUIRED
