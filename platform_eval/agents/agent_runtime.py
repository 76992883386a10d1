"""An agent deployed to the Agent Runtime (Agent Engine): ``projects/P/locations/L/
reasoningEngines/ID`` or its REST URL. Sessions and turns go through the resource's ``:query``
and ``:streamQuery`` methods (what the official SDK's ``run_inference`` calls), on the same
HTTP client, connection policy and Google OAuth token as a served agent (``served.connect``);
its cases run as a served agent's do (``served.served_executor``)."""

from __future__ import annotations

import logging
from typing import Any

import httpx

from .connection import Secrets, check_inline_parts
from .remote import ServedAgent, ServedAgentError, agent_runtime_url
from .served import ApiServerSource, ServedApp
from .source import AgentSource, Capabilities

_logger = logging.getLogger("platform_eval.agents")


class AgentRuntimeSource(ApiServerSource):
    """An Agent Runtime resource, opened as a served agent is (``served.connect`` makes its
    app): its API has no live stream here, its tools and spans stay on the platform."""

    kind = "an Agent Runtime"
    capabilities = Capabilities()

    async def make_app(
        self, agent: ServedAgent, http: httpx.AsyncClient, secrets: Secrets
    ) -> ServedApp:
        return await runtime_app(agent, http, secrets)

    @classmethod
    def recognise(cls, agent: Any) -> AgentSource | None:
        if isinstance(agent, ServedAgent):
            return cls(agent) if agent.is_runtime else None
        if isinstance(agent, str) and agent_runtime_url(agent) is not None:
            return cls(ServedAgent(agent))
        return None


class RuntimeApp(ServedApp):
    """An Agent Runtime (``projects/P/locations/L/reasoningEngines/ID``): its ADK app's class
    methods the official SDK's ``run_inference`` calls (read from its source):
    ``create_session`` and ``get_session`` through ``:query``, each turn through
    ``:streamQuery?alt=sse`` (``stream_query``), its events ADK's as JSON, one a line."""

    def _url(self, path: str) -> str:
        # A custom method of the resource: ``.../reasoningEngines/ID:query``, not a path below.
        return f"{self.agent.url}{path}"

    async def _query(self, method: str, given: dict[str, Any]) -> Any:
        answered = await self.call("POST", ":query", {"classMethod": method, "input": given})
        return answered.get("output") if isinstance(answered, dict) else None

    async def create_session(
        self, user_id: str, session_id: str, state: dict[str, Any], events: list[dict[str, Any]]
    ) -> str:
        if events:
            raise ServedAgentError(
                f"{self.agent.url}: an Agent Runtime session is not started with earlier turns "
                "here: a case that continues a conversation runs on an api_server URL, or "
                "in-process (--agent DIR)"
            )
        # No session id of ours: the managed session service gives its own (the SDK's way).
        created = await self._query("create_session", {"user_id": user_id, "state": state})
        if not isinstance(created, dict) or not created.get("id"):
            raise ServedAgentError(f"{self.agent.url}:query create_session answered no session")
        return str(created["id"])

    async def get_session(self, user_id: str, session_id: str) -> dict[str, Any]:
        found = await self._query("get_session", {"user_id": user_id, "session_id": session_id})
        if not isinstance(found, dict) or not isinstance(found.get("events"), list):
            raise ServedAgentError(f"{self.agent.url}:query get_session answered no session")
        return found

    async def run_turn(self, user_id: str, session_id: str, message: Any) -> list[dict[str, Any]]:
        check_inline_parts(message, f"a turn to {self.agent.url}")
        body = {
            "classMethod": "stream_query",
            "input": {
                "user_id": user_id,
                "session_id": session_id,
                "message": message.model_dump(mode="json", exclude_none=True),
            },
        }
        return await self._stream(":streamQuery?alt=sse", body)


async def runtime_app(agent: ServedAgent, http: httpx.AsyncClient, secrets: Secrets) -> ServedApp:
    """The Agent Runtime ``agent`` names, on the HTTP client ``served.connect`` made."""
    if agent.app_name:
        raise ServedAgentError(
            f"--app-name {agent.app_name}: an Agent Runtime serves one app; its resource name "
            "names it"
        )
    app = RuntimeApp(agent, agent.url.rsplit("/", 1)[-1], "", {}, http, secrets)
    note = (
        f"{agent.url}: an Agent Runtime gives no app details, so judged criteria are shown no "
        "agent instruction or tools"
    )
    app.notes.append(note)
    _logger.warning("%s", note)
    return app
