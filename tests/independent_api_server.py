"""A second implementation of ADK's api_server REST API, written here without google-adk: what
an ADK Java, Go or TypeScript agent serves. Its agent is a script (no model): asked the weather
in a city, it calls ``get_weather``, answers from the tool's result, and keeps the city in the
session's state. It speaks the API as those servers do: camelCase events with
``actions.stateDelta``, sessions with their events and state, ``/run`` only (no ``/run_sse``: the
Java server's older releases have none), no ``app-info``.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from served_agents import lifespan, read_body, serve_asgi

APP = "weather_app"
AGENT = "weather_agent"
WEATHER = {"Oslo": "snowy", "Rome": "sunny", "Lima": "cloudy"}


class _Sessions:
    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.clock = itertools.count(1)

    def create(self, user: str, body: dict[str, Any]) -> dict[str, Any]:
        session_id = body.get("sessionId") or str(uuid.uuid4())
        session = {
            "id": session_id,
            "appName": APP,
            "userId": user,
            "state": dict(body.get("state") or {}),
            "events": list(body.get("events") or []),
            "lastUpdateTime": time.time(),
        }
        with self.lock:
            self.by_key[(user, session_id)] = session
        return session

    def event(self, invocation: str, author: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": f"e-{next(self.clock)}",
            "invocationId": invocation,
            "author": author,
            "timestamp": time.time(),
            **fields,
        }

    def run(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        session = self.by_key[(body["userId"], body["sessionId"])]
        message = body["newMessage"]
        invocation = f"inv-{uuid.uuid4().hex[:8]}"
        said = " ".join(p.get("text", "") for p in message.get("parts") or [])
        user = self.event(invocation, "user", content=message)
        found = re.search(r"weather in (\w+)", said)
        answer: list[dict[str, Any]]
        if found is None:
            reply = {"role": "model", "parts": [{"text": "Ask me the weather in a city."}]}
            answer = [self.event(invocation, AGENT, content=reply)]
        else:
            city = found.group(1)
            call_id = f"call-{uuid.uuid4().hex[:6]}"
            call = {"functionCall": {"id": call_id, "name": "get_weather", "args": {"city": city}}}
            result = {"weather": WEATHER.get(city, "unknown")}
            response = {
                "functionResponse": {"id": call_id, "name": "get_weather", "response": result}
            }
            text = f"It is {result['weather']} in {city}."
            answer = [
                self.event(invocation, AGENT, content={"role": "model", "parts": [call]}),
                self.event(invocation, AGENT, content={"role": "user", "parts": [response]}),
                self.event(
                    invocation,
                    AGENT,
                    content={"role": "model", "parts": [{"text": text}]},
                    actions={"stateDelta": {"last_city": city}},
                ),
            ]
        with self.lock:
            session["events"] += [user, *answer]
            for event in answer:
                session["state"].update((event.get("actions") or {}).get("stateDelta") or {})
            session["lastUpdateTime"] = time.time()
        return answer


def _app(sessions: _Sessions) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        body = await read_body(receive)
        status, answer = _route(sessions, scope["method"], scope["path"], body)
        payload = json.dumps(answer).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    return app


def _route(sessions: _Sessions, method: str, path: str, body: bytes) -> tuple[int, Any]:
    given = json.loads(body) if body else {}
    if (method, path) == ("GET", "/list-apps"):
        return 200, [APP]
    if (method, path) == ("POST", "/run"):
        return 200, sessions.run(given)
    found = re.fullmatch(rf"/apps/{APP}/users/([^/]+)/sessions(?:/([^/]+))?", path)
    if found is not None:
        user, session_id = found.groups()
        if method == "POST" and session_id is None:
            return 200, sessions.create(user, given)
        if method == "GET" and session_id is not None:
            session = sessions.by_key.get((user, session_id))
            return (200, session) if session else (404, {"error": "no such session"})
    return 404, {"error": f"{method} {path}: not served"}


@contextmanager
def independent_api_server() -> Iterator[str]:
    """The server's base URL while it runs on loopback, in a thread of this process."""
    with serve_asgi(_app(_Sessions()), "independent-api-server") as url:
        yield url
