"""A local Agent Runtime: the REST API of ``projects/P/locations/L/reasoningEngines/ID`` (its
``:query`` and ``:streamQuery?alt=sse`` methods) in front of the ADK app template a deployment
runs, ``vertexai.agent_engines.AdkApp``, with its class methods called as the service calls them.

Run as its own process (the template sets process-wide environment and Vertex AI's global
configuration): ``python tests/agent_runtime_server.py AGENTS_DIR AGENT``; it prints the base URL
of the engine on its first line. The agent's model is whatever ``GOOGLE_GEMINI_BASE_URL`` serves.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
import warnings
from typing import Any

from served_agents import lifespan, read_body

ENGINE = "projects/test-project/locations/us-central1/reasoningEngines/4242"


def _app(agents_dir: str, agent: str) -> Any:
    import vertexai
    from google.auth.credentials import AnonymousCredentials

    # No cloud here: the template asks Vertex AI's configuration for a project, nothing more.
    vertexai.init(
        project="test-project", location="us-central1", credentials=AnonymousCredentials()
    )
    sys.path.insert(0, agents_dir)
    root_agent = importlib.import_module(f"{agent}.agent").root_agent
    from vertexai.agent_engines import AdkApp

    app = AdkApp(agent=root_agent)
    app.set_up()
    # The template points google-genai at Vertex AI; the fake model speaks the Gemini API.
    os.environ["GOOGLE_GENAI_USE_VERTEXAI"] = "0"
    os.environ["GOOGLE_GENAI_USE_ENTERPRISE"] = "0"
    return app


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", exclude_none=True) if callable(dump) else value


def _asgi(adk_app: Any) -> Any:
    base = f"/v1beta1/{ENGINE}"

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        body = await read_body(receive)
        given = json.loads(body) if body else {}
        method, arguments = given.get("classMethod"), given.get("input") or {}
        path = scope["path"]
        if path == f"{base}:query" and method in ("create_session", "get_session"):
            found = await asyncio.to_thread(getattr(adk_app, method), **arguments)
            await _answer(send, 200, {"output": _jsonable(found)})
        elif path == f"{base}:streamQuery" and method == "stream_query":
            events = await asyncio.to_thread(lambda: list(adk_app.stream_query(**arguments)))
            frames = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
            await _answer(send, 200, frames, "text/event-stream")
        else:
            await _answer(send, 404, {"error": {"code": 404, "message": f"{path} {method}"}})

    return app


async def _answer(send: Any, status: int, payload: Any, kind: str = "application/json") -> None:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    headers = [(b"content-type", kind.encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data.encode()})


def main(agents_dir: str, agent: str) -> None:
    import socket

    import uvicorn

    warnings.simplefilter("ignore")
    adk_app = _app(agents_dir, agent)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1beta1/{ENGINE}", flush=True)
    config = uvicorn.Config(_asgi(adk_app), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
