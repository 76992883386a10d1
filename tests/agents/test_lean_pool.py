"""The lean connection pool (agents/lean_pool.py) and connections kept across a served run's
requests: counted by the server, as the TCP connections it accepted."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpcore
import httpx
import pytest
from hostile_agents import HostileApiServer, hostile, send_json

from platform_eval.agents import served
from platform_eval.agents.lean_pool import LeanConnectionPool, make_lean
from platform_eval.agents.remote import ServedAgent

#: What the raw server does after answering a request on a connection.
AfterAnswer = Callable[[asyncio.StreamWriter], Awaitable[None]]


async def _keep_open(writer: asyncio.StreamWriter) -> None:
    return None


class RawServer:
    """An HTTP/1.1 server on asyncio streams answering every request ``ok`` after ``hold``
    seconds; it counts the connections it accepted and the most requests it had at once."""

    def __init__(self, hold: float = 0.0, after: AfterAnswer = _keep_open) -> None:
        self.hold, self.after = hold, after
        self.accepted = self.busy = self.most_busy = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                self.busy += 1
                self.most_busy = max(self.most_busy, self.busy)
                await asyncio.sleep(self.hold)
                self.busy -= 1
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
                await self.after(writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def start(self) -> tuple[asyncio.Server, str]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        return server, f"http://127.0.0.1:{port}"


def _lean(limits: httpx.Limits) -> httpx.AsyncClient:
    return make_lean(httpx.AsyncClient(limits=limits, timeout=10))


def test_a_lean_client_is_httpx_s_own_with_its_pool_made_lean() -> None:
    client = _lean(httpx.Limits(max_connections=3))
    assert type(client._transport._pool) is LeanConnectionPool  # type: ignore[attr-defined]
    # A proxy's transport (mounted for every URL) keeps httpx's pool.
    proxied = make_lean(httpx.AsyncClient(proxy="http://127.0.0.1:9"))
    mounted = [t for t in proxied._mounts.values() if t is not None]
    assert mounted and not any(isinstance(t._pool, LeanConnectionPool) for t in mounted)  # type: ignore[attr-defined]


def test_requests_at_once_share_no_more_connections_than_the_limit_and_keep_them() -> None:
    async def main() -> RawServer:
        # Held long enough that the three connections overlap on a busy machine too.
        raw = RawServer(hold=0.2)
        server, url = await raw.start()
        async with server, _lean(httpx.Limits(max_connections=3)) as client:
            for _ in range(2):
                answers = await asyncio.gather(*(client.get(f"{url}/{n}") for n in range(20)))
                assert [a.text for a in answers] == ["ok"] * 20
        return raw

    raw = asyncio.run(main())
    assert raw.most_busy == 3  # the limit, reached and never passed
    assert raw.accepted == 3  # 40 requests, and each connection kept for the next


def test_a_connection_the_server_closed_while_idle_is_never_given_a_request() -> None:
    async def close_soon(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.05)
        writer.close()

    async def main(client: httpx.AsyncClient) -> RawServer:
        raw = RawServer(after=close_soon)
        server, url = await raw.start()
        async with server, client:
            for _ in range(3):
                assert (await client.get(url)).text == "ok"
                await asyncio.sleep(0.3)  # the server has closed it meanwhile
        return raw

    limits = httpx.Limits(max_connections=2)
    assert asyncio.run(main(_lean(limits))).accepted == 3
    assert asyncio.run(main(httpx.AsyncClient(limits=limits))).accepted == 3  # as httpx's own


def test_a_connection_past_its_keep_alive_expiry_is_closed_not_used() -> None:
    async def main() -> RawServer:
        raw = RawServer()
        server, url = await raw.start()
        # An expiry no busy machine reaches between two requests in a row.
        limits = httpx.Limits(max_connections=2, keepalive_expiry=1.0)
        async with server, _lean(limits) as client:
            assert (await client.get(url)).text == "ok"
            assert (await client.get(url)).text == "ok"  # kept
            await asyncio.sleep(1.5)
            assert (await client.get(url)).text == "ok"  # a new one
        return raw

    assert asyncio.run(main()).accepted == 2


def test_a_request_waits_for_a_connection_when_every_one_is_busy() -> None:
    async def main() -> tuple[RawServer, list[str]]:
        raw = RawServer(hold=0.1)
        server, url = await raw.start()
        async with server, _lean(httpx.Limits(max_connections=1)) as client:
            answers = await asyncio.gather(*(client.get(url) for _ in range(4)))
        return raw, [a.text for a in answers]

    raw, texts = asyncio.run(main())
    assert texts == ["ok"] * 4 and raw.accepted == 1 and raw.most_busy == 1


def test_a_failed_connection_frees_its_place() -> None:
    async def main() -> None:
        pool = httpcore.AsyncConnectionPool(max_connections=1)
        pool.__class__ = LeanConnectionPool
        async with pool:
            for _ in range(3):  # each attempt would wait for ever if the first kept its place
                with pytest.raises(httpcore.ConnectError):
                    await asyncio.wait_for(pool.request("GET", "http://127.0.0.1:9/"), 5)

    asyncio.run(main())


class _SessionsTaken(HostileApiServer):
    """An api_server that holds a session under every id it is asked for (409), and keeps the
    client port of every request: one port a TCP connection."""

    def __init__(self) -> None:
        super().__init__()
        self.ports: set[int] = set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.ports.add(scope["client"][1])
            if scope["method"] == "POST" and scope["path"].endswith("/sessions"):
                body = b""
                while True:
                    message = await receive()
                    body += message.get("body", b"")
                    if not message.get("more_body"):
                        break
                if json.loads(body).get("sessionId"):
                    await send_json(send, {"detail": "Session already exists: " + "x" * 200}, 409)
                else:
                    await send_json(send, {"id": "new", "state": {}, "events": []})
                return
        await super().__call__(scope, receive, send)


def test_a_session_id_taken_is_read_to_its_end_and_its_connection_kept() -> None:
    server = _SessionsTaken()

    async def main(url: str) -> list[str]:
        async with served.connect(ServedAgent(url)) as app:
            return [await app.create_session("u", f"case-{n}", {}, []) for n in range(10)]

    with hostile(server) as url:
        made = asyncio.run(main(url))
    assert made == ["new"] * 10
    assert len(server.ports) == 1  # 21 requests on one connection (one each when closed)
