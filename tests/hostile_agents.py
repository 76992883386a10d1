"""Hostile servers of agents, on loopback: an ADK api_server that speaks the REST API right
until the one place it turns on us (a redirect off its origin, a turn that never ends, a
dripped body, an answer too large, a busy answer after the turn was processed, an error that
echoes our headers), and a trap that records whatever reaches it. What each does is a
function of this module, handed to ``HostileApiServer``."""

from __future__ import annotations

import asyncio
import base64
import http.server
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from served_agents import lifespan, read_body, serve_asgi
from sockets import serve_in_thread

Send = Callable[[dict[str, Any]], Awaitable[None]]
#: How a route answers: (server, scope, request body, send).
Route = Callable[["HostileApiServer", dict[str, Any], bytes, Send], Awaitable[None]]

APP = "travel_agent"


def answer_event(text: str = "It is sunny.", invocation: str = "e-1") -> dict[str, Any]:
    """An agent's final answer, as ADK's /run_sse sends it."""
    return {
        "id": f"{invocation}-answer",
        "invocationId": invocation,
        "author": APP,
        "content": {"role": "model", "parts": [{"text": text}]},
        "timestamp": 1.0,
    }


async def send_json(send: Send, body: Any, status: int = 200) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def start_stream(send: Send, status: int = 200) -> None:
    headers = [(b"content-type", b"text/event-stream")]
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def chunk(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


# -- what a turn does (/run_sse) -------------------------------------------------------------


async def answers(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
    """A well-behaved turn: one event, the agent's answer."""
    await start_stream(send)
    await chunk(send, b"data: " + json.dumps(answer_event()).encode() + b"\n\n")
    await send({"type": "http.response.body", "body": b""})


def redirects_to(location: str, status: int = 307) -> Route:
    async def route(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
        headers = [(b"location", location.encode()), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    return route


def forever(every: float, line: bytes) -> Route:
    """A turn that never ends: ``line`` sent every ``every`` seconds (a keep-alive comment,
    a partial event), each within any read timeout."""

    async def route(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
        await start_stream(send)
        while True:
            await chunk(send, line)
            await asyncio.sleep(every)

    return route


def one_event_of(size: int) -> Route:
    """A turn whose one event is ``size`` bytes, sent in 64 KiB pieces."""

    async def route(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
        await start_stream(send)
        await chunk(send, b'data: {"author": "travel_agent", "content": {"parts": [{"text": "')
        piece = b"x" * 65536
        for _ in range(size // len(piece) + 1):
            await chunk(send, piece)
        await chunk(send, b'"}]}}\n\n')
        await send({"type": "http.response.body", "body": b""})

    return route


def events(count: int) -> Route:
    async def route(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
        await start_stream(send)
        partial = dict(answer_event("a"), partial=True)
        line = b"data: " + json.dumps(partial).encode() + b"\n\n"
        for _ in range(count // 100 + 1):
            await chunk(send, line * 100)
        await send({"type": "http.response.body", "body": b""})

    return route


async def processed_then_busy(
    server: HostileApiServer, scope: Any, body: bytes, send: Send
) -> None:
    """The turn is taken (counted in its session), then answered 503: a client that sends it
    again into that session has the agent act on it twice."""
    await send_json(send, {"detail": "overloaded"}, 503)


async def echoes_headers(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
    """A 500 whose body repeats the request's headers (a debugging proxy's)."""
    headers = {k.decode(): v.decode() for k, v in scope["headers"]}
    await send_json(send, {"detail": f"cannot handle request with headers {headers}"}, 500)


def live_redirects_to(location: str, status: int = 302) -> Route:
    """A /run_live handshake answered with a redirect to ``location``."""

    async def route(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
        headers = [(b"location", location.encode()), (b"content-length", b"0")]
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": b""})

    return route


def live_frame_of(size: int) -> Route:
    """A /run_live conversation that answers the first thing said with one text frame of
    ``size`` bytes (an event whose text is that long)."""

    async def route(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
        await send({"type": "websocket.accept"})
        await scope["receive"]()
        text = json.dumps(answer_event("x" * size))
        await send({"type": "websocket.send", "text": text})
        await scope["receive"]()  # until we close

    return route


def live_audio_of(size: int, chunk_size: int = 2**19) -> Route:
    """A /run_live conversation that answers with ``size`` bytes of audio in chunks, each
    frame under any frame cap, and never says the turn is complete."""

    async def route(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
        await send({"type": "websocket.accept"})
        await scope["receive"]()
        data = base64.b64encode(bytes(chunk_size)).decode()
        for n in range(size // chunk_size):
            event = {
                "author": APP, "id": f"a-{n}", "invocationId": "e-1", "partial": True,
                "content": {"role": "model", "parts": [
                    {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": data}}]},
            }  # fmt: skip
            await send({"type": "websocket.send", "text": json.dumps(event)})
            await asyncio.sleep(0)
        await scope["receive"]()

    return route


# -- what a session GET does ----------------------------------------------------------------


async def the_session(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
    await send_json(send, server.session_of(scope["path"].rsplit("/", 1)[-1]))


def dripped(every: float) -> Route:
    """The session a byte at a time, ``every`` seconds apart."""

    async def route(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
        data = json.dumps(server.session_of(scope["path"].rsplit("/", 1)[-1])).encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for byte in data:
            await chunk(send, bytes([byte]))
            await asyncio.sleep(every)
        await send({"type": "http.response.body", "body": b""})

    return route


def with_state_of(size: int) -> Route:
    """A session whose state holds ``size`` bytes, streamed."""

    async def route(server: HostileApiServer, scope: Any, body: bytes, send: Send) -> None:
        session = server.session_of(scope["path"].rsplit("/", 1)[-1])
        head = json.dumps(session)[:-1].encode() + b', "state": {"blob": "'
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await chunk(send, head)
        piece = b"y" * 65536
        for _ in range(size // len(piece) + 1):
            await chunk(send, piece)
        await send({"type": "http.response.body", "body": b'"}}'})

    return route


@dataclass
class HostileApiServer:
    """An ASGI app speaking ADK's api_server REST API for one app (``travel_agent``) with
    no app-info; ``turn`` and ``session`` answer its turns and session reads. Every request's
    headers are kept (``seen``), and every turn's session and message (``turns``)."""

    turn: Route = answers
    session: Route = the_session
    list_apps: Route | None = None
    #: How a /run_live handshake is answered (the WebSocket denial response extension).
    live: Route = field(default_factory=lambda: live_redirects_to("ws://127.0.0.2:9/run_live"))
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    turns: list[tuple[str, str]] = field(default_factory=list)

    def session_of(self, session_id: str) -> dict[str, Any]:
        said = [text for sid, text in self.turns if sid == session_id]
        events = []
        for n, text in enumerate(said):
            invocation = f"e-{n}"
            events.append(
                {
                    "author": "user",
                    "invocationId": invocation,
                    "timestamp": 0.0,
                    "content": {"role": "user", "parts": [{"text": text}]},
                }
            )
            events.append(answer_event(invocation=invocation))
        return {"id": session_id, "appName": APP, "userId": "u", "state": {}, "events": events}  # fmt: skip

    async def __call__(self, scope: Any, receive: Any, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["type"] == "websocket":
            self.seen.append(
                (scope["path"], {k.decode().lower(): v.decode() for k, v in scope["headers"]})
            )
            await receive()  # websocket.connect
            # A live route reads what is said on the socket with scope["receive"].
            await self.live(self, {**scope, "receive": receive}, b"", send)
            return
        body = await read_body(receive)
        path, method = scope["path"], scope["method"]
        self.seen.append((path, {k.decode().lower(): v.decode() for k, v in scope["headers"]}))
        if path == "/list-apps":
            if self.list_apps is not None:
                await self.list_apps(self, scope, body, send)
            else:
                await send_json(send, [APP])
        elif path.endswith("/app-info"):
            await send_json(send, {"detail": "Not Found"}, 404)
        elif method == "POST" and path.endswith("/sessions"):
            given = json.loads(body or b"{}")
            await send_json(send, {"id": given.get("sessionId") or "s", "appName": APP,
                                   "userId": "u", "state": given.get("state") or {},
                                   "events": []})  # fmt: skip
        elif path == "/run_sse":
            given = json.loads(body)
            text = "".join(p.get("text", "") for p in given["newMessage"].get("parts", []))
            self.turns.append((given["sessionId"], text))
            await self.turn(self, scope, body, send)
        elif method == "GET" and "/sessions/" in path:
            await self.session(self, scope, body, send)
        else:
            await send_json(send, {"detail": "Not Found"}, 404)


@contextmanager
def hostile(server: HostileApiServer) -> Iterator[str]:
    """``server`` on a free loopback port; its base URL."""
    with serve_asgi(server, "hostile-api-server") as url:
        yield url


@dataclass
class Trap:
    """An HTTP server that answers every request 200 and keeps what reached it."""

    host: str
    port: int = 0
    reached: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


@contextmanager
def trap(host: str = "127.0.0.1") -> Iterator[Trap]:
    """A ``Trap`` listening on ``host`` (any address of 127.0.0.0/8) until the block ends."""
    caught = Trap(host)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def _keep(self) -> None:
            with lock:
                caught.reached.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            body = b'["travel_agent"]'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._keep()

        def do_POST(self) -> None:
            self._keep()

        def log_message(self, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer((host, 0), Handler) as server:
        caught.port = server.server_port
        serve_in_thread(server, "trap")
        try:
            yield caught
        finally:
            server.shutdown()


# -- A2A peers ------------------------------------------------------------------------------


def _failing_agent() -> Any:
    from google.adk.agents.base_agent import BaseAgent

    class Failing(BaseAgent):
        """Every task fails on the peer (its agent raises)."""

        async def _run_async_impl(self, ctx: Any) -> Any:
            raise KeyError("city")
            yield  # an async generator, as ADK's agents are

    return Failing(name="failing_peer")


def _endless_agent() -> Any:
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.events.event import Event
    from google.genai import types

    class Endless(BaseAgent):
        """A task that never completes: a partial answer every 0.3 s, for ever."""

        async def _run_async_impl(self, ctx: Any) -> Any:
            while True:
                part = types.Part(text=".")
                yield Event(author=self.name, partial=True, content=types.Content(parts=[part]))
                await asyncio.sleep(0.3)

    return Endless(name="endless_peer")


PEERS: dict[str, Callable[[], Any]] = {"failing": _failing_agent, "endless": _endless_agent}


@contextmanager
def a2a_hostile(
    kind: str, wrap: Callable[[Any], Any] | None = None, rpc_host: str = "127.0.0.1"
) -> Iterator[str]:
    """google-adk's ``to_a2a`` serving a peer of ``kind`` (``PEERS``) in a thread on loopback, its card declaring its RPC address on
    ``rpc_host``; ``wrap``: middleware around the app. Yields the card's URL."""
    import socket
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from google.adk.a2a.utils.agent_to_a2a import to_a2a

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        app = to_a2a(PEERS[kind](), host=rpc_host, port=port)
    import uvicorn

    served = wrap(app) if wrap is not None else app
    config = uvicorn.Config(served, host="127.0.0.1", port=port, log_level="critical")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="a2a-hostile", daemon=True)
    thread.start()
    import time

    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the A2A peer did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/.well-known/agent-card.json"
    finally:
        server.should_exit = True
        thread.join(10)


def rpc_answered(status: int) -> Callable[[Any], Any]:
    """Middleware: every POST (the JSON-RPC calls) answered ``status``; the card is served."""

    def wrap(app: Any) -> Any:
        async def answered(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["method"] == "POST":
                await send_json(send, {"error": "unavailable"}, status)
                return
            await app(scope, receive, send)

        return answered

    return wrap


def card_dripped(every: float) -> Callable[[Any], Any]:
    """Middleware: the agent card a byte every ``every`` seconds."""

    def wrap(app: Any) -> Any:
        async def dripping(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"].startswith("/.well-known/"):
                await send({"type": "http.response.start", "status": 200, "headers": []})
                for byte in b'{"name": "slow", "url": "http://127.0.0.1:9/"}':
                    await chunk(send, bytes([byte]))
                    await asyncio.sleep(every)
                await send({"type": "http.response.body", "body": b""})
                return
            await app(scope, receive, send)

        return dripping

    return wrap


def card_of(size: int) -> Callable[[Any], Any]:
    """Middleware: an agent card of ``size`` bytes, streamed with no length given."""

    def wrap(app: Any) -> Any:
        async def large(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"].startswith("/.well-known/"):
                await send({"type": "http.response.start", "status": 200, "headers": []})
                await chunk(send, b'{"name": "large", "description": "')
                for _ in range(size // 65536 + 1):
                    await chunk(send, b"z" * 65536)
                await send({"type": "http.response.body", "body": b'"}'})
                return
            await app(scope, receive, send)

        return large

    return wrap


def rpc_bloated(size: int) -> Callable[[Any], Any]:
    """Middleware: every POST (the JSON-RPC calls) answered with ``size`` bytes, streamed with
    no length given; the card is served."""

    def wrap(app: Any) -> Any:
        async def bloated(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["method"] == "POST":
                await read_body(receive)
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"application/json")]})  # fmt: skip
                await chunk(send, b'{"jsonrpc": "2.0", "id": 1, "result": "')
                for _ in range(size // 65536 + 1):
                    await chunk(send, b"w" * 65536)
                await send({"type": "http.response.body", "body": b'"}'})
                return
            await app(scope, receive, send)

        return bloated

    return wrap
