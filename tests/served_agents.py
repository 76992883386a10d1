"""google-adk's own api_server (``get_fast_api_app``, what ``adk api_server`` serves), serving
an agents folder on loopback in a thread of this process: the served agent the tests run cases
against, speaking ADK's REST API with ADK's own code."""

from __future__ import annotations

import json
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def adk_api_server(agents_dir: Path, wrap: Callable[[Any], Any] | None = None) -> Iterator[str]:
    """The server's base URL while it serves ``agents_dir`` (``wrap``: middleware around its
    app, a token check say)."""
    # google-adk's loader imports each agent folder as a top-level module: one an earlier test
    # in this process imported from another folder of the same name would be served instead.
    agents = [f for f in Path(agents_dir).iterdir() if (f / "agent.py").is_file()]
    for folder in agents:
        for name in [m for m in sys.modules if m == folder.name or m.startswith(f"{folder.name}.")]:
            del sys.modules[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # google-adk's experimental notices
        from google.adk.cli.fast_api import get_fast_api_app

        app = get_fast_api_app(agents_dir=str(agents_dir), web=False, use_local_storage=False)
    with serve_asgi(wrap(app) if wrap is not None else app, "adk-api-server") as url:
        yield url


@contextmanager
def serve_asgi(app: Any, name: str) -> Iterator[str]:
    """``app`` served by uvicorn on a free loopback port, in a thread of this process; its base
    URL while the block runs."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, f"{name} did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


async def read_body(receive: Any) -> bytes:
    """An ASGI request's whole body."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def lifespan(receive: Any, send: Any) -> None:
    """An ASGI lifespan answered: started, then stopped when asked."""
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


def bearer_required(token: str) -> Callable[[Any], Any]:
    """Middleware that answers 401 to a request without ``Authorization: Bearer <token>``."""

    def wrap(app: Any) -> Any:
        async def checked(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                given = dict(scope.get("headers") or []).get(b"authorization", b"")
                if given != f"Bearer {token}".encode():
                    await send({"type": "http.response.start", "status": 401, "headers": []})
                    await send({"type": "http.response.body", "body": b"{}"})
                    return
            await app(scope, receive, send)

        return checked

    return wrap


def answering_first(
    path: str, status: int, times: int | None = None, detail: str = "not here"
) -> Callable[[Any], Any]:
    """Middleware that answers ``status`` (and ``detail``) to requests of ``path`` (the first
    ``times`` of them; None: all), and lets every other request through."""

    def wrap(app: Any) -> Any:
        left = [times]

        async def answered(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"] == path and left[0] != 0:
                if left[0] is not None:
                    left[0] -= 1
                headers = [(b"retry-after", b"0")] if status in (429, 503) else []
                await send({"type": "http.response.start", "status": status, "headers": headers})
                body = json.dumps({"detail": detail}).encode()
                await send({"type": "http.response.body", "body": body})
                return
            await app(scope, receive, send)

        return answered

    return wrap


#: What the A2A peer's process runs: google-adk's ``to_a2a`` on the agent folder, served by
#: uvicorn (the a2a-sdk's server), until it is stopped.
_A2A_PEER = """
import importlib.util, sys, warnings
import uvicorn
warnings.simplefilter("ignore")
from google.adk.a2a.utils.agent_to_a2a import to_a2a

folder, port = sys.argv[1], int(sys.argv[2])
spec = importlib.util.spec_from_file_location(
    "a2a_peer_agent", folder + "/__init__.py", submodule_search_locations=[folder]
)
module = importlib.util.module_from_spec(spec)
sys.modules["a2a_peer_agent"] = module
spec.loader.exec_module(module)
app = to_a2a(module.agent.root_agent, host="127.0.0.1", port=port)
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
"""


@contextmanager
def a2a_peer(agent_folder: Path) -> Iterator[str]:
    """google-adk's ``to_a2a`` serving the agent of ``agent_folder`` as an A2A peer (the
    a2a-sdk's server) on loopback, in a process of its own (its model: this process's
    environment); yields its agent card's URL."""
    import socket
    import subprocess

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    peer = subprocess.Popen(
        [sys.executable, "-c", _A2A_PEER, str(agent_folder), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    card = f"http://127.0.0.1:{port}/.well-known/agent-card.json"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert peer.poll() is None, "the A2A peer exited"
            assert time.monotonic() < deadline, "the A2A peer did not start"
            try:
                if httpx.get(card, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        yield card
    finally:
        peer.terminate()
        peer.wait(timeout=30)


class Silence:
    """Middleware that, once ``after`` turns have been answered, answers no turn at all (the
    request is read and left waiting): a served agent that stops answering mid-run. ``quiet``
    set to False answers again."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.answered = 0
        self.quiet = True

    def __call__(self, app: Any) -> Any:
        import asyncio

        async def silenced(scope: Any, receive: Any, send: Any) -> None:
            turn = scope["type"] == "http" and scope["path"] in ("/run_sse", "/run")
            if turn and self.quiet and self.answered >= self.after:
                await asyncio.sleep(3600)  # cancelled when the client gives up or the server ends
                return
            if turn:
                self.answered += 1
            await app(scope, receive, send)

        return silenced
