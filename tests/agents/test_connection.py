"""The connection policy's pieces (agents/connection.py): origins as a browser compares them,
secrets cut out of text, an event stream's lines however they are split, a deadline that is
told apart from a timeout inside it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from platform_eval.agents.connection import (
    SSE_LINE,
    CapExceededError,
    DeadlineError,
    Secrets,
    origin_of,
    stream_lines,
    within,
)


def test_an_origin_is_its_scheme_host_and_port_never_its_password() -> None:
    assert origin_of("https://Agent.example/run") == "https://agent.example:443"
    assert origin_of("http://u:secret@127.0.0.1:8000/x") == "http://127.0.0.1:8000"
    assert origin_of("wss://agent.example/run_live") == origin_of("https://agent.example")
    assert origin_of("http://127.0.0.1:8000") != origin_of("http://127.0.0.1:8001")
    assert origin_of("http://[::1]:80/") == "http://[::1]:80"


def test_secrets_are_cut_out_of_text_whole_and_without_their_scheme() -> None:
    secrets = Secrets(["Bearer tok-123456", "k3y-abcdef", "ab"])
    said = secrets.redact("headers: {'authorization': 'Bearer tok-123456', 'x': 'k3y-abcdef'}")
    assert "tok-123456" not in said and "k3y-abcdef" not in said and said.count("***") == 2
    assert secrets.redact("token tok-123456 echoed") == "token *** echoed"
    assert "tok" not in repr(secrets)
    assert secrets.redact("ab cd") == "ab cd"  # too short to be a secret worth garbling text


def _response(chunks: list[bytes]) -> httpx.Response:
    async def body() -> Any:
        for chunk in chunks:
            yield chunk

    return httpx.Response(200, content=body())


def _lines(chunks: list[bytes]) -> list[str]:
    async def read() -> list[str]:
        return [line async for line in stream_lines(_response(chunks), "here")]

    return asyncio.run(read())


def test_an_event_streams_lines_are_read_however_the_chunks_split_them() -> None:
    assert _lines([b"data: 1\r", b"\ndata: 2\n\nda", b"ta: 3\rdata: 4"]) == [
        "data: 1", "data: 2", "", "data: 3", "data: 4",
    ]  # fmt: skip


def test_a_line_over_its_cap_is_refused_before_it_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SSE_LINE.variable, "0.001")  # about 1 KB
    with pytest.raises(CapExceededError, match=r"PLATFORM_EVAL_MAX_EVENT_MIB"):
        _lines([b"data: " + b"x" * 600, b"x" * 600, b"x" * 10**6])


def test_a_deadline_is_told_apart_from_a_timeout_inside_it() -> None:
    async def late() -> None:
        async with within(0.05, "the agent", "the turn timeout"):
            await asyncio.sleep(5)

    async def inner() -> None:
        async with within(float("inf"), "the agent"):
            raise TimeoutError("the model's own")

    with pytest.raises(DeadlineError, match=r"did not answer in time.*\(the turn timeout\)"):
        asyncio.run(late())
    with pytest.raises(TimeoutError, match="the model's own") as raised:
        asyncio.run(inner())
    assert not isinstance(raised.value, DeadlineError)


def test_large_answers_are_read_one_at_a_time_and_small_ones_never_wait() -> None:
    from platform_eval._large_reads import LARGE, LargeRead

    async def main() -> list[str]:
        order: list[str] = []

        async def read(name: str, size: int, hold: float) -> None:
            async with LargeRead() as large:
                await large.grown(size)
                order.append(f"{name} in")
                await asyncio.sleep(hold)
                order.append(f"{name} out")

        await asyncio.gather(
            read("big-1", LARGE + 1, 0.05), read("big-2", LARGE + 1, 0.0),
            read("small", LARGE, 0.0),
        )  # fmt: skip
        return order

    order = asyncio.run(main())
    # The second large read waited for the first to end; the small one went in at once.
    assert order.index("big-2 in") > order.index("big-1 out")
    assert order.index("small in") < order.index("big-1 out")


def test_a_large_read_that_fails_gives_its_place_up() -> None:
    from platform_eval._large_reads import LARGE, LargeRead

    async def main() -> bool:
        with pytest.raises(ValueError):
            async with LargeRead() as large:
                await large.grown(LARGE + 1)
                raise ValueError("over its cap")
        async with LargeRead() as after:
            await asyncio.wait_for(after.grown(LARGE + 1), 5)
            return after.holding

    assert asyncio.run(main())
