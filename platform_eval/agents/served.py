"""An agent served over HTTP by ADK's ``api_server`` REST API (``adk api_server``, ``adk web``,
a Cloud Run or Agent Runtime deployment, ADK in Java, Go or TypeScript), run on eval cases as
an agent loaded here is (``running``): the agent under test is the one that ships.

Per case run: a session made through the API with the case's initial state (and, for a case
that continues a conversation, its earlier turns as the session's events), each user turn sent
to ``/run_sse`` (``/run`` where the server has no SSE) and its events read back, the next user
message from ADK's user simulator as ``adk eval`` makes it, then the session read back whole
(``GET .../sessions/{id}``): its events and final state are the candidate, as a session saved
in-process is. What each agent was given (the app details ADK's judged criteria read) is the
server's ``/apps/{app}/app-info``: the instruction as the agent declares it (a template's
placeholders unfilled), its tool declarations; a server without that route gives none, and the
run says so.

Headers (``--agent-header``) go with every request and are never logged or shown; they never
travel in clear text off the machine. A Cloud Run or Agent Runtime URL that answers 401 or 403
without them is asked again with a Google ID token from Application Default Credentials.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import logging
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import httpx

from .. import _standby
from .._adaptive import DEFAULT_CAP
from ..formats import adk
from .connection import (
    ANSWER,
    LIVE_FRAME,
    SESSION,
    AgentConnectionError,
    Cap,
    Secrets,
    call_deadline,
    check_inline_parts,
    count_events,
    frame_too_big,
    open_websocket,
    over_cap,
    read_capped,
    read_json,
    read_to_its_end,
    redirect_guard,
    stream_lines,
    within,
)
from .history import history_events
from .lean_pool import make_lean
from .live import LiveConversation, LiveStream, Utterance, silence, turn_timeout
from .model_quota import CURRENT_CASE, CaseQuota
from .remote import ServedAgent, ServedAgentError, is_agent_url
from .reports import CaseRun
from .running import (
    DEFAULT_USER,
    CaseExecutor,
    adk_experimental,
    converse,
    session_id_for,
    simulator_provider,
    to_adk_case,
)
from .served_details import StandIns, turn_details
from .source import AgentSource, Capabilities, OpenedAgent, RunSettings

_logger = logging.getLogger("platform_eval.agents")

#: Answers of the server that say "not now" (its own load): tried again, the cases cut.
_BUSY = (429, 503)
_TRIES = 5

#: A server's failure that says it was overloaded, not that the agent failed: a gateway's
#: 502 or 504, or a store that could not take the write now (adk api_server's default SQLite
#: session file answers "database is locked" when many cases write at once). The case is run
#: again from the start, in a new session, with fewer cases at once.
_TRANSIENT_STATUS = (502, 504)
_TRANSIENT_TEXT = re.compile(r"database is locked|deadlock detected|temporarily unavailable", re.I)
#: Runs of one case at most, the first included, when the server fails it transiently.
CASE_TRIES = 3


def _id_token(url: str) -> str:
    """A Google ID token for ``url``'s service, from Application Default Credentials (what Cloud
    Run and Agent Runtime take)."""
    import google.auth.exceptions
    import google.auth.transport.requests
    import google.oauth2.id_token

    parts = urlsplit(url)
    audience = f"{parts.scheme}://{parts.netloc}"
    try:
        token = google.oauth2.id_token.fetch_id_token(  # type: ignore[no-untyped-call]
            google.auth.transport.requests.Request(), audience
        )
    except google.auth.exceptions.GoogleAuthError as exc:
        raise ServedAgentError(
            f"{url} asks for credentials and no Google ID token could be had from Application "
            f"Default Credentials ({type(exc).__name__}); pass one: --agent-header "
            "'Authorization: Bearer TOKEN'"
        ) from None
    return str(token)


@dataclass
class ServedApp:
    """A served agent connected: its app, its agents' details and the HTTP client."""

    agent: ServedAgent
    app_name: str
    root_name: str
    #: What each agent is given, as AgentConfig JSON by name (from app-info; {} when the
    #: server gives none).
    agents: dict[str, dict[str, Any]]
    http: httpx.AsyncClient
    #: The headers' values and tokens, cut out of whatever the server's answers put in a
    #: message (``connection.Secrets``).
    secrets: Secrets = field(default_factory=Secrets)
    #: Whether the server streams (``/run_sse``); False after it answered that it has none.
    sse: bool = True
    #: Whether the server already held a session under a case's id (said once).
    ids_taken: bool = False
    #: Whether an instruction had to be shown as declared (said once).
    declared_said: bool = False
    #: google-adk stand-ins of the app's agents, to build their instructions (``details``).
    stand_ins: StandIns | None = None
    #: Whether a case was run again for the server's load (said once).
    retried_said: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def fingerprint(self) -> str:
        """What decides the runs: the server, the app and what its agents declare (a redeploy
        that changes them is another agent, whose runs are not resumed from this one's)."""
        document = json.dumps([self.agent.url, self.app_name, self.agents], sort_keys=True)
        return hashlib.sha256(document.encode()).hexdigest()

    def _url(self, path: str) -> str:
        """Where ``path`` is asked (under the server's base URL)."""
        return path

    def deadline(self, where: str) -> Any:
        """The deadline of one call to ``where`` (``connection.within``): the turn timeout, or
        what is left of the run's own timeout when that is sooner."""
        seconds, cause = call_deadline(self.agent.turn_timeout)
        return within(seconds, f"the served agent at {where}", cause)

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        conflict: Any = None,
        cap: Cap = ANSWER,
        busy_retried: bool = True,
    ) -> Any:
        """A JSON request to the server, under its deadline and ``cap``; ServedAgentError
        naming the URL on a failure (a 409 answers ``conflict`` instead, where one is given).
        ``busy_retried``: a 429 or 503 is asked again (False for a request that may have been
        acted on: it is a _TransientError, and its case starts again in a new session)."""
        where = f"{self.agent.url}{path}"
        for attempt in range(1, _TRIES + 1):
            busy: httpx.Response | None = None
            async with self.deadline(where):
                try:
                    async with self.http.stream(method, self._url(path), json=body) as response:
                        if response.status_code in _BUSY and attempt < _TRIES and busy_retried:
                            busy = response
                            await read_to_its_end(response, where)
                        elif response.status_code == 409 and conflict is not None:
                            await read_to_its_end(response, where)
                            return conflict
                        else:
                            await self.refuse(method, path, response, transient=not busy_retried)
                            return await read_json(response, cap, where)
                except httpx.HTTPError as exc:
                    raise _unreachable(self.agent.url, exc) from None
            await _backoff(attempt, busy)
        raise AssertionError("unreachable")

    async def refuse(
        self, method: str, path: str, response: httpx.Response, *, transient: bool = False
    ) -> None:
        """Raises for a failed answer: its status and what it says (read under a cap, the
        known secrets cut out). ``transient``: a busy answer (429, 503) is _TransientError."""
        if response.status_code < 400:
            return
        detail = ""
        with contextlib.suppress(AgentConnectionError, ValueError):
            raw = await read_capped(response, ANSWER, f"{self.agent.url}{path}")
            text = raw.decode("utf-8", errors="replace")
            with contextlib.suppress(ValueError):
                found = json.loads(text)
                text = str(found.get("detail") if isinstance(found, dict) else found)
            detail = text[:300]
        detail = self.secrets.redact(detail)
        said = f"{self.agent.url}{path} answered {method} with {response.status_code}: {detail}"
        busy = transient and response.status_code in _BUSY
        if (
            busy
            or response.status_code in _TRANSIENT_STATUS
            or (response.status_code >= 500 and _TRANSIENT_TEXT.search(detail) is not None)
        ):
            raise _TransientError(said.rstrip(": "))
        raise ServedAgentError(said.rstrip(": "))

    async def look(self, path: str, *, refused: bool = False) -> tuple[int, Any]:
        """A GET of ``path`` under its deadline: its status and, for a 200, its JSON (read
        under ``ANSWER``). ``refused``: a failed answer raises (``refuse``)."""
        where = f"{self.agent.url}{path}"
        async with self.deadline(where):
            try:
                async with self.http.stream("GET", path) as response:
                    if refused:
                        await self.refuse("GET", path, response)
                    if response.status_code != 200:
                        await read_to_its_end(response, where)
                        return response.status_code, None
                    return 200, await read_json(response, ANSWER, where)
            except httpx.HTTPError as exc:
                raise _unreachable(self.agent.url, exc) from None

    async def run_turn(self, user_id: str, session_id: str, message: Any) -> list[dict[str, Any]]:
        """One user message sent; the events the agent answered with, in order."""
        check_inline_parts(message, f"a turn to {self.agent.url}")
        body = {
            "appName": self.app_name,
            "userId": user_id,
            "sessionId": session_id,
            "newMessage": message.model_dump(mode="json", by_alias=True, exclude_none=True),
            "streaming": False,
        }
        if self.sse:
            try:
                return await self._run_sse(body)
            except _NoSseError:
                if self.sse:  # said once, by the first turn that finds it out
                    self.sse = False
                    note = f"{self.agent.url} has no /run_sse: turns sent to /run"
                    self.notes.append(note)
                    _logger.warning("%s", note)
        answered = await self.call("POST", "/run", body, busy_retried=False)
        if not isinstance(answered, list):
            raise ServedAgentError(f"{self.agent.url}/run answered {type(answered).__name__}")
        return [_event(e, self.agent.url) for e in answered]

    def _sessions(self, user_id: str) -> str:
        return f"/apps/{quote(self.app_name, safe='')}/users/{quote(user_id, safe='')}/sessions"

    async def create_session(
        self, user_id: str, session_id: str, state: dict[str, Any], events: list[dict[str, Any]]
    ) -> str:
        """A new session with ``state`` (and ``events``, the earlier turns of a continued
        conversation); the id the server gave it."""
        body: dict[str, Any] = {"sessionId": session_id, "state": state}
        if events:
            body["events"] = events
        created = await self.call("POST", self._sessions(user_id), body, conflict=_TAKEN)
        if created is _TAKEN:
            # The server keeps the sessions of an earlier evaluation under the cases' ids (a
            # deployment's database): this one gets an id of the server's choosing.
            if not self.ids_taken:
                self.ids_taken = True
                note = (
                    f"{self.agent.url} holds sessions of an earlier evaluation under the cases' "
                    "ids: new sessions take ids of the server's (their saved files pair with "
                    "their cases by their first message)"
                )
                self.notes.append(note)
                _logger.warning("%s", note)
            del body["sessionId"]
            created = await self.call("POST", self._sessions(user_id), body)
        if isinstance(created, dict) and created.get("id"):
            return str(created["id"])
        return session_id

    async def details(
        self, user_id: str, session: dict[str, Any], state: dict[str, Any]
    ) -> dict[str, dict[str, Any]] | None:
        """What each agent was given in each turn of ``session`` (which started with ``state``),
        written into its events as the in-process run writes them; each agent's first."""
        if not self.agents:
            return None
        if self.stand_ins is None:
            self.stand_ins = StandIns(self.agents, self.root_name)  # made once: pydantic's cost
        first, declared = await turn_details(self.stand_ins, self.app_name, user_id, session, state)
        if declared and not self.declared_said:
            self.declared_said = True
            note = (
                f"{self.agent.url}: the instruction of {', '.join(declared)} cannot be built as "
                "ADK builds it from what app-info declares (an instruction provider, or a "
                "placeholder with no value): judged criteria are shown it as declared"
            )
            self.notes.append(note)
            _logger.warning("%s", note)
        return first or dict(self.agents)

    async def get_session(self, user_id: str, session_id: str) -> dict[str, Any]:
        """The session as the server keeps it: its events and state."""
        path = f"{self._sessions(user_id)}/{quote(session_id, safe='')}"
        session = await self.call("GET", path, cap=SESSION)
        if not isinstance(session, dict) or not isinstance(session.get("events"), list):
            raise ServedAgentError(f"{self.agent.url}{path} answered no session")
        return session

    async def _run_sse(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return await self._stream("/run_sse", body, no_stream=(404, 405))

    async def _stream(
        self, path: str, body: dict[str, Any], no_stream: tuple[int, ...] = ()
    ) -> list[dict[str, Any]]:
        """The events a streamed answer sends, a JSON object a line (``data:`` framed or not),
        the whole turn under its deadline and every line and the count of events capped; a
        status of ``no_stream`` is _NoSseError. A turn is never sent twice into one session:
        a busy answer is a _TransientError, whose case starts again in a new session."""
        where = f"{self.agent.url}{path.split('?')[0]}"
        events: list[dict[str, Any]] = []
        async with self.deadline(where):
            try:
                async with self.http.stream("POST", self._url(path), json=body) as response:
                    if response.status_code in no_stream:
                        raise _NoSseError
                    await self.refuse("POST", path.split("?")[0], response, transient=True)
                    # Closed at once whatever the loop raises: a large line holds its place.
                    async with contextlib.aclosing(stream_lines(response, where)) as lines:
                        async for line in lines:
                            data = line.removeprefix("data:").strip()
                            if data and not line.startswith((":", "event:", "id:", "retry:")):
                                event = _event(_json(data, self.agent.url), self.agent.url)
                                events.append(event)
                                count_events(len(events), where)
            except httpx.HTTPError as exc:
                raise _unreachable(self.agent.url, exc) from None
        return events


#: What ``call`` answers for a 409 where a conflict is expected.
_TAKEN = object()


class _NoSseError(Exception):
    """The server answered /run_sse 404 or 405."""


class _TransientError(ServedAgentError):
    """The server failed a request for its own load (``_TRANSIENT_TEXT``, a 502 or 504)."""


def _json(text: str, url: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise ServedAgentError(f"{url}/run_sse sent an event that is not JSON") from None


def _event(raw: Any, url: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ServedAgentError(f"{url} sent an event that is not an object")
    if "error" in raw and "author" not in raw:
        # ADK's server reports a failed run as an event of its own: the case fails with it.
        said = f"the agent at {url} failed: {raw['error']}"
        if _TRANSIENT_TEXT.search(str(raw["error"])):
            raise _TransientError(said)
        raise ServedAgentError(said)
    return raw


async def _backoff(attempt: int, response: httpx.Response | None) -> None:
    from .._retry import parse_retry_after

    asked = parse_retry_after(response.headers.get("retry-after")) if response else None
    case = CURRENT_CASE.get()
    if case is not None:
        # The server's own "not now": fewer cases at once, as a model's 429 cuts them.
        case.refused += 1
        case.place.refused_now(asked)
    await asyncio.sleep(min(asked if asked is not None else 0.5 * 2**attempt, 30.0))


class _UnreachableError(ServedAgentError):
    """No connection to the served agent: every other case would meet it too."""


def _unreachable(url: str, exc: httpx.HTTPError) -> ServedAgentError:
    if isinstance(exc, httpx.TimeoutException):
        return ServedAgentError(
            f"the served agent at {url} did not answer in time ({type(exc).__name__})"
        )
    return _UnreachableError(
        f"the served agent at {url} cannot be reached: {type(exc).__name__}: {exc}"
    )


AppMaker = Callable[[ServedAgent, httpx.AsyncClient, Secrets], Awaitable[ServedApp]]


async def api_server_app(
    agent: ServedAgent, http: httpx.AsyncClient, secrets: Secrets
) -> ServedApp:
    """The api_server's app ``agent`` names, chosen from those it lists, its agents' details
    read."""
    app = ServedApp(agent, agent.app_name or "", "", {}, http, secrets)
    listed = await _list_apps(app, dict(agent.headers))
    app.app_name = _chosen_app(agent, listed)
    app.root_name, app.agents = await _app_details(app)
    for note in app.notes:
        _logger.warning("%s", note)
    return app


@contextlib.asynccontextmanager
async def connect(
    agent: ServedAgent, concurrency: int = DEFAULT_CAP, make_app: AppMaker = api_server_app
) -> AsyncIterator[ServedApp]:
    """The served agent on an HTTP client of the connection policy, its app made by
    ``make_app`` (an api_server's by default)."""
    headers = dict(agent.headers)
    limits = httpx.Limits(max_connections=concurrency + 2, max_keepalive_connections=concurrency)
    timeout = httpx.Timeout(agent.turn_timeout, connect=30.0)
    auth = _GoogleAccess() if agent.is_runtime and _takes_token(agent, headers) else None
    secrets = Secrets(headers.values())
    client = httpx.AsyncClient(
        base_url=agent.url,
        headers=headers,
        timeout=timeout,
        limits=limits,
        auth=auth,
        follow_redirects=True,
        event_hooks={"response": [redirect_guard(agent.url)]},
    )
    async with make_lean(client) as http:
        yield await make_app(agent, http, secrets)


def _takes_token(agent: ServedAgent, headers: dict[str, str]) -> bool:
    """An Agent Runtime on Google's endpoint, with no Authorization of the caller's: it takes an
    OAuth token of Application Default Credentials (only ever over https)."""
    given = {name.lower() for name in headers}
    return agent.url.startswith("https://") and "authorization" not in given


class _GoogleAccess(httpx.Auth):
    """A bearer token of Application Default Credentials on every request, refreshed off the
    event loop when it has run out (a long run outlives an hour's token)."""

    def __init__(self) -> None:
        self._credentials: Any = None

    def _token(self) -> str:
        import google.auth
        import google.auth.transport.requests

        if self._credentials is None:
            self._credentials, _ = google.auth.default(
                scopes=["https://www.googleapis.com/auth/cloud-platform"]
            )
        if not self._credentials.valid:
            self._credentials.refresh(google.auth.transport.requests.Request())
        return str(self._credentials.token)

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        import asyncio

        try:
            token = await asyncio.to_thread(self._token)
        except Exception as exc:  # google.auth's errors: said as what to do, not a traceback
            raise ServedAgentError(
                f"{request.url.host}: an Agent Runtime takes a Google OAuth token and none could "
                f"be had from Application Default Credentials ({type(exc).__name__}); run "
                "`gcloud auth application-default login`, or pass --agent-header "
                "'Authorization: Bearer TOKEN'"
            ) from None
        request.headers["Authorization"] = f"Bearer {token}"
        yield request


async def _list_apps(app: ServedApp, headers: dict[str, str]) -> list[str]:
    status, listed = await app.look("/list-apps")
    if status in (401, 403) and not headers and app.agent.url.startswith("https:"):
        # Cloud Run and Agent Runtime take a Google ID token for the service's URL (only ever
        # over https: a token is a credential, and only to that origin: connection's guard).
        token = _id_token(app.agent.url)
        app.secrets.add(token)
        app.http.headers["Authorization"] = f"Bearer {token}"
        status, listed = await app.look("/list-apps")
    if status == 404 and app.agent.app_name:
        return [app.agent.app_name]  # a server that lists no apps: the one named is taken
    if status >= 400:
        await app.look("/list-apps", refused=True)
    if isinstance(listed, dict):  # ?detailed=true's shape, from newer servers
        listed = [a.get("name") for a in listed.get("apps") or [] if isinstance(a, dict)]
    if not isinstance(listed, list):
        raise ServedAgentError(f"{app.agent.url}/list-apps answered no list of apps")
    return [str(name) for name in listed if name]


def _chosen_app(agent: ServedAgent, listed: list[str]) -> str:
    if agent.app_name:
        if agent.app_name not in listed:
            raise ServedAgentError(
                f"{agent.url} serves no app {agent.app_name!r}; it serves: "
                f"{', '.join(listed) or 'none'}"
            )
        return agent.app_name
    if len(listed) == 1:
        return listed[0]
    raise ServedAgentError(
        f"{agent.url} serves {len(listed)} apps ({', '.join(listed) or 'none'}): name the one "
        "to evaluate with --app-name"
    )


async def _app_details(app: ServedApp) -> tuple[str, dict[str, dict[str, Any]]]:
    """The root agent's name and every agent's AgentConfig JSON, from ``app-info``."""
    path = f"/apps/{quote(app.app_name, safe='')}/app-info"
    status, info = await app.look(path)
    if not isinstance(info, dict):
        app.notes.append(
            f"{app.agent.url}{path} answered {status}: the server gives no app "
            "details, so judged criteria are shown no agent instruction or tools"
        )
        return app.app_name, {}
    agents: dict[str, dict[str, Any]] = {}
    for name, given in (info.get("agents") or {}).items():
        if not isinstance(given, dict):
            continue
        config: dict[str, Any] = {"agentId": str(name)}
        for key in ("description", "instruction"):
            if isinstance(given.get(key), str) and given[key]:
                config[key] = given[key]
        if isinstance(given.get("tools"), list) and given["tools"]:
            config["tools"] = given["tools"]
        # google-adk's AgentInfo is written in snake_case; another server may use camelCase.
        subs = given.get("subAgents") or given.get("sub_agents")
        if isinstance(subs, list) and subs:
            config["subAgents"] = subs
        agents[str(name)] = config
    return str(info.get("rootAgentName") or app.app_name), agents


async def run_case(
    app: ServedApp,
    case: Any,
    history: Sequence[adk.Invocation],
    session_id: str,
    provider: Any,
    on_turn: Callable[[], None] | None = None,
    audio: dict[int, bytes] | None = None,
) -> tuple[dict[str, Any], str, dict[str, dict[str, Any]] | None, list[float]]:
    """Runs one ADK eval case (google-adk's EvalCase) on the served agent; its session as the
    server keeps it, why the conversation ended, what each agent was given (``CaseRun.
    agents``, built as ADK builds it: ``served_details``) and each turn's seconds by our
    clock. ``audio``: given in live mode, the case is one conversation on the server's
    ``/run_live`` WebSocket, each turn's audio put into it."""
    from google.adk.events.event import Event

    given = case.session_input
    user_id = (given.user_id if given else None) or DEFAULT_USER
    session_id = (given.session_id if given else None) or session_id
    events = [
        e.model_dump(mode="json", by_alias=True, exclude_none=True)
        for e in history_events(history, app.root_name)
    ]
    state = dict(given.state) if given else {}
    session_id = await app.create_session(user_id, session_id, state, events)
    with adk_experimental():
        simulator = provider.provide(case)

    async def turn(message: Any) -> list[Any]:
        sent = time.monotonic()
        answered = await app.run_turn(user_id, session_id, message)
        timings.append(round(time.monotonic() - sent, 6))
        invocation = next((e.get("invocationId") for e in answered if e.get("invocationId")), "")
        said = [Event(content=message, author="user", invocation_id=invocation)]
        return said + [Event.model_validate(e) for e in answered]

    timings: list[float] = []
    if audio is None:
        ending = await converse(simulator, turn, on_turn)
        session = await app.get_session(user_id, session_id)
    else:
        async with SocketLive.open(app, user_id, session_id) as live:
            ending = await converse(simulator, live.conversation.adk_turn, on_turn)
        session = await app.get_session(user_id, session_id)
        session = live.conversation.finished(session, audio)
        timings = [t.ended_at - t.sent_at for t in live.conversation.turns if t.ended_at]
    return session, ending, await app.details(user_id, session, state), timings


class SocketLive(LiveStream):
    """A case's live conversation on a served agent's ``/run_live`` WebSocket (``live``): the
    frames ADK's api_server takes (a ``content`` or a ``blob`` each), its events back."""

    def __init__(self, app: ServedApp, socket: Any, url: str) -> None:
        self.app = app
        self.socket = socket
        self.url = url
        self.conversation = LiveConversation(
            self, timeout=min(app.agent.turn_timeout, turn_timeout())
        )

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, app: ServedApp, user_id: str, session_id: str) -> AsyncIterator[SocketLive]:
        from websockets.exceptions import InvalidHandshake, InvalidURI

        query = urlencode(
            {"app_name": app.app_name, "user_id": user_id, "session_id": session_id,
             "modalities": "AUDIO"}
        )  # fmt: skip
        base = app.agent.url
        url = "wss" + base[len("https") :] if base.startswith("https") else "ws" + base[4:]
        url = f"{url}/run_live?{query}"
        headers = dict(app.agent.headers)
        if "authorization" not in {k.lower() for k in headers} and app.http.headers.get(
            "authorization"
        ):
            headers["Authorization"] = app.http.headers["authorization"]  # the ID token
        where = f"{app.agent.url}/run_live"
        try:
            socket = await open_websocket(url, headers, open_timeout=30)
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            said = app.secrets.redact(f"{type(exc).__name__}: {exc}")
            raise ServedAgentError(f"{where} cannot be opened: {said}") from None
        live = cls(app, socket, where)
        try:
            yield live
        finally:
            live.conversation.close()
            with contextlib.suppress(Exception):
                await socket.send(json.dumps({"close": True}))
            await socket.close()

    async def send(self, said: Utterance) -> None:
        from websockets.exceptions import ConnectionClosed

        frames: list[dict[str, Any]] = []
        if said.content is not None:
            frames.append({"content": said.content})
        if said.audio:
            for data in (said.audio, silence(said.audio_mime)):
                blob = {"mimeType": said.audio_mime, "data": base64.b64encode(data).decode()}
                frames.append({"blob": blob})
        try:
            for frame in frames:
                await self.socket.send(json.dumps(frame))
        except ConnectionClosed as exc:
            raise ServedAgentError(f"{self.url} closed the conversation: {_closed(exc)}") from None

    async def next(self) -> dict[str, Any] | None:
        from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

        while True:
            try:
                raw = await self.socket.recv()
            except ConnectionClosedOK:
                return None
            except ConnectionClosed as exc:
                if frame_too_big(exc):
                    raise over_cap(self.url, LIVE_FRAME) from None
                raise ServedAgentError(
                    f"{self.url} closed the conversation: {_closed(exc)}"
                ) from None
            if isinstance(raw, bytes):
                continue  # the api_server sends events as text; nothing else is one
            return _event(_json(raw, self.url), self.url)


def _closed(exc: Any) -> str:
    received = getattr(exc, "rcvd", None)
    if received is None:
        return "the connection was lost"
    return f"{received.code} {received.reason}".strip()


class ApiServerSource(AgentSource):
    """An agent served by ADK's api_server REST API (``adk api_server``, Cloud Run, ADK in
    any language): its tools run on its server, its spans are recorded there."""

    kind = "a served agent"
    capabilities = Capabilities(live=True)

    def __init__(self, agent: ServedAgent) -> None:
        super().__init__(agent.spec)
        self.agent = agent

    @classmethod
    def recognise(cls, agent: Any) -> AgentSource | None:
        if isinstance(agent, ServedAgent):
            return None if agent.is_runtime else cls(agent)
        if isinstance(agent, str) and is_agent_url(agent):
            return cls(ServedAgent(agent))
        return None

    @contextlib.asynccontextmanager
    async def opened(self, settings: RunSettings, runs: int) -> AsyncIterator[OpenedAgent]:
        _standby.release()  # the agent runs on its server: no worker process here takes part
        async with connect(self.agent, settings.max_concurrency, self.make_app) as app:
            yield OpenedAgent(app.fingerprint, served_executor(app, settings))

    async def make_app(
        self, agent: ServedAgent, http: httpx.AsyncClient, secrets: Secrets
    ) -> ServedApp:
        """The app on the connection ``connect`` made: an api_server's here."""
        return await api_server_app(agent, http, secrets)


def served_executor(app: ServedApp, settings: RunSettings) -> CaseExecutor:
    """How one case runs on the served agent, as ``execute_case`` runs it in-process: the same
    session ids, a run that fails reported with its error while the others go on, a case the
    server failed for its own load run again from the start in a new session."""
    num_runs, live = settings.num_runs, settings.live
    provider = simulator_provider(settings.user_simulator_config)

    async def execute(
        case: adk.EvalCase, run: int, quota: CaseQuota, mocks: Any, on_turn: Callable[[], None]
    ) -> tuple[CaseRun, str | None]:
        for attempt in range(1, CASE_TRIES + 1):
            result, stops, transient = await execute_once(case, run, quota, on_turn, attempt)
            if not transient or attempt == CASE_TRIES:
                break
            # The server's own overload: fewer cases at once, and this one again, from the
            # start, in a new session (the failed one may hold half a turn).
            quota.refused += 1
            quota.place.refused_now(None)
            if not app.retried_said:
                app.retried_said = True
                note = f"{app.agent.url} failed cases for its load ({result.error}): run again"
                app.notes.append(note)
                _logger.warning("%s", note)
            await asyncio.sleep(0.5 * 2**attempt)
        return result, stops

    async def execute_once(
        case: adk.EvalCase, run: int, quota: CaseQuota, on_turn: Callable[[], None], attempt: int
    ) -> tuple[CaseRun, str | None, bool]:
        """One run of the case: its result, the message that stops every run (or None), and
        whether the server failed it for its load (``_TransientError``)."""
        result = CaseRun(case.eval_id, run, agents=dict(app.agents) or None)
        history = (case.conversation or [])[: case.history_turns]
        asked = (
            case.model_copy(update={"conversation": (case.conversation or [])[len(history) :]})
            if history
            else case
        )
        token = CURRENT_CASE.set(quota)
        try:
            (
                result.session,
                result.ending,
                result.agents,
                result.turn_seconds,
            ) = await run_case(
                app,
                to_adk_case(asked),
                history,
                session_id_for(case.eval_id, run, num_runs)
                + (f"~{attempt}" if attempt > 1 else ""),
                provider,
                on_turn,
                result.audio if live else None,
            )
        except _TransientError as exc:
            result.error = str(exc)
            return result, None, True
        except ServedAgentError as exc:
            result.error = str(exc)
            if isinstance(exc, _UnreachableError):
                return result, result.error, False  # every other case would meet it: said once
        except Exception as exc:  # one case's failure must not stop the others
            result.error = f"{type(exc).__name__}: {exc}"
            _logger.debug("%s: the served agent failed", result.key, exc_info=True)
        finally:
            CURRENT_CASE.reset(token)
        return result, None, False

    return execute
