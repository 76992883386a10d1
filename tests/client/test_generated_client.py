"""``Client`` is generated from ``AsyncClient`` (``tools/unasync_client.py``): the file in the
package is what the tool makes from the async source now, so the two cannot drift; and the
options of either client change through its constructor (``with_options``)."""

from __future__ import annotations

import importlib.util
from typing import Any

import httpx
import pytest
from paths import ROOT

from platform_eval.client import AsyncClient, Client
from platform_eval.emulator import Emulator


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location(
        "unasync_client", ROOT / "tools" / "unasync_client.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sync_client_is_what_the_tool_makes_of_the_async_one() -> None:
    tool = _tool()
    made = tool.generate(tool.SOURCE.read_text(encoding="utf-8"))
    assert tool.TARGET.read_text(encoding="utf-8") == made, (
        "platform_eval/_client_sync.py is out of date: run python tools/unasync_client.py"
    )


def test_the_tool_leaves_nothing_async_in_the_sync_client() -> None:
    text = (ROOT / "platform_eval" / "_client_sync.py").read_text(encoding="utf-8")
    text = text[text.index('"""', 3) + 3 :]  # after the docstring, which names its source
    tool = _tool()
    for _, sync_only in (tool.SYNC_ONLY_IMPORT, tool.SYNC_ONLY_METHOD):
        text = text.replace(sync_only, "")  # the async client the sync one becomes (to_async)
    for word in ("async ", "await ", "Async", "asyncio", "__aenter__"):
        assert word not in text, word


def test_with_options_builds_through_the_constructor_and_shares_the_connections(
    emulator: Emulator, project: str
) -> None:
    with emulator.client(project) as client:
        quick = client.with_options(timeout=5, max_retries=0)
        assert isinstance(quick, Client)
        assert quick._transport_config.timeout == 5
        assert quick._transport_config.retry.max_retries == 0
        assert quick._transport.http_client is client._transport.http_client
        assert (quick.parent, quick.api_endpoint) == (client.parent, client.api_endpoint)
        assert quick.target_identity == client.target_identity
        assert list(quick.list_sets()) == list(client.list_sets())
        quick.close()  # leaves the connections it shares open
        assert list(client.list_sets()) is not None
        with pytest.raises(ValueError, match="timeout must be a positive number"):
            client.with_options(timeout=-1)  # checked as the constructor checks it


def test_a_call_with_a_short_timeout_ends_within_it(emulator: Emulator, project: str) -> None:
    """The per-call form: one call bound by its own timeout, the client's others unchanged."""
    with emulator.client(project) as client:
        with pytest.raises(ValueError, match="max_response_bytes"):
            client.with_options(max_response_bytes=-5)
        assert client._transport_config.timeout != 0.5
        assert client.with_options(timeout=0.5)._transport_config.timeout == 0.5


@pytest.mark.anyio
async def test_to_async_and_async_with_options_build_through_the_constructor(
    emulator: Emulator, project: str
) -> None:
    with emulator.client(project) as client:
        async_client = client.to_async()
        try:
            assert isinstance(async_client, AsyncClient)
            assert async_client.target_identity == client.target_identity
            assert isinstance(async_client._transport.http_client, httpx.AsyncClient)
            derived = async_client.with_options(timeout=7)
            assert derived._transport_config.timeout == 7
            assert [s.name for s in [s async for s in derived.list_sets()]] == [
                s.name for s in client.list_sets()
            ]
        finally:
            await async_client.close()
