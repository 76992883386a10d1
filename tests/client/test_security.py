"""Bearer tokens never reach logs, reprs or exception messages."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from conftest import FAST_RETRY, free_port
from factories import request_item
from google.oauth2.credentials import Credentials

from platform_eval import AsyncClient, Client, errors
from platform_eval.emulator import Emulator

TOKEN = "ya29.super-secret-token-value"


def _credentials() -> Credentials:
    return Credentials(token=TOKEN)  # type: ignore[no-untyped-call]


def test_token_is_sent_but_never_shown(
    emulator: Emulator, project: str, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[str] = []
    caplog.set_level(logging.DEBUG)
    client = Client(
        project, api_endpoint=emulator.url, credentials=_credentials(), retry=FAST_RETRY
    )
    original = client._transport._http.send

    def spy(request, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(request.headers.get("authorization", ""))
        return original(request, **kwargs)

    client._transport._http.send = spy  # type: ignore[method-assign]
    with client:
        item = client.create_item(request_item("x"))
        emulator.inject_fault(path="evaluationItems", method="GET", status=503, times=10)
        with pytest.raises(errors.ServiceUnavailable) as unavailable:
            client.get_item(item.id)
        with pytest.raises(errors.NotFound) as not_found:
            client.get_set("1")
        shown = [repr(client), str(client), repr(client._transport_config), caplog.text]
        for exc in (unavailable.value, not_found.value):
            shown += [str(exc), repr(exc), repr(exc.args), repr(exc.__dict__)]
    assert seen and all(h == f"Bearer {TOKEN}" for h in seen)
    assert "platform_eval.http" in caplog.text  # debug logging did happen
    for text in shown:
        assert TOKEN not in text


def test_connection_errors_do_not_carry_the_token() -> None:
    client = Client(
        "p",
        api_endpoint=f"http://127.0.0.1:{free_port()}",
        credentials=_credentials(),
        retry=FAST_RETRY,
    )
    with client, pytest.raises(errors.APIConnectionError) as caught:
        client.get_item("1")
    assert TOKEN not in str(caught.value) and TOKEN not in repr(caught.value)
    assert caught.value.__cause__ is None  # the httpx error (with the request) is not chained


def test_async_client_repr_has_no_credentials() -> None:
    client = AsyncClient("p", api_endpoint="http://127.0.0.1:1", credentials=_credentials())
    assert TOKEN not in repr(client)
    assert "Credentials" not in repr(client)


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_debug_logs_never_show_an_endpoints_password(emulator: Any, tmp_path: Any) -> None:
    """httpx logs every request's URL: with --debug, an endpoint's user and password would be
    in the output (and in any CI log that keeps it)."""
    import subprocess
    import sys

    url = emulator.url.replace("http://", "http://admin:s3cret-pw@")
    done = subprocess.run(
        [sys.executable, "-m", "platform_eval.cli", "--debug", "--endpoint", url, "runs", "list"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "HTTP Request: GET http://***@127.0.0.1" in done.stderr
    assert "s3cret-pw" not in done.stderr + done.stdout
