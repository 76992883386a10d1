"""An A2A peer as the agent under test: google-adk's own ``RemoteA2aAgent`` as the root, which
sends each user turn over the a2a-sdk client and turns what the peer answers (its messages,
artifacts and tool-use parts) into ADK events, as an ADK agent calling it sees them.

Held to the connection policy (``connection``): the card is read once here under its cap and a
deadline, no redirect leaves its origin, and every answer of the peer is capped while the
a2a-sdk reads it (``CappedTransport``). google-adk reports a peer that did not answer (a card
it refuses, a task that failed, a 5xx, a stream that ended before the task did) as an event
with an ``error_message`` and no answer: ``unanswered`` finds it, so that such a case is
NOT_EVALUATED with its cause, never scored on the empty answer.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import httpx

from .connection import (
    A2A_ANSWER,
    A2A_CARD,
    AgentConnectionError,
    call_deadline,
    capped_transport,
    read_json,
    redirect_guard,
    within,
)
from .in_process import InProcessSource
from .loading import AgentLoadError, LoadedAgent
from .remote import is_a2a_card
from .source import AgentSource, Capabilities

#: The longest the card may take to arrive, whatever its server sends.
CARD_TIMEOUT = 30.0
#: The longest one turn of the peer may take (its task from the message to its end).
TURN_TIMEOUT = 600.0


def _client(card_url: str) -> httpx.AsyncClient:
    """The HTTP client the peer is asked through: redirects within the card's origin only,
    every answer capped while the a2a-sdk reads it."""
    transport = capped_transport(A2A_ANSWER, "the A2A peer")
    return httpx.AsyncClient(
        transport=transport,
        timeout=httpx.Timeout(TURN_TIMEOUT, connect=30),
        follow_redirects=True,
        event_hooks={"response": [redirect_guard(card_url)]},
    )


async def read_card(card_url: str) -> dict[str, Any]:
    """The peer's agent card, read under ``A2A_CARD`` and ``CARD_TIMEOUT``."""
    where = f"--agent {card_url}"
    seconds, cause = call_deadline(CARD_TIMEOUT)
    try:
        async with (
            within(seconds, f"the A2A agent card at {card_url}", cause),
            httpx.AsyncClient(
                timeout=CARD_TIMEOUT,
                follow_redirects=True,
                event_hooks={"response": [redirect_guard(card_url)]},
            ) as http,
            http.stream("GET", card_url) as response,
        ):
            if response.status_code != 200:
                raise AgentLoadError(
                    f"{where}: the A2A agent card cannot be read (HTTP {response.status_code})"
                )
            card = await read_json(response, A2A_CARD, f"{where}: the A2A agent card")
    except AgentConnectionError as exc:
        raise AgentLoadError(str(exc)) from None
    except httpx.HTTPError as exc:
        raise AgentLoadError(
            f"{where}: the A2A agent card cannot be read ({type(exc).__name__})"
        ) from None
    if not isinstance(card, dict) or not card.get("name"):
        raise AgentLoadError(f"{where}: not an A2A agent card (no name)")
    return card


async def a2a_peer(card_url: str) -> LoadedAgent:
    """The peer whose card is at ``card_url``, as an agent to run. It is named after the card,
    and its fingerprint is the card's: a peer that now declares otherwise is another agent,
    whose runs are not resumed."""
    card = await read_card(card_url)
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent

    name = "".join(c if c.isalnum() or c == "_" else "_" for c in str(card["name"]))
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = f"a2a_{name}"
    http = _client(card_url)
    # The card's URL, not the card read here: google-adk then checks that the card's RPC
    # address is on the card's own origin, as it does for any card it fetches.
    root = RemoteA2aAgent(name=name, agent_card=card_url, httpx_client=http, timeout=TURN_TIMEOUT)
    digest = hashlib.sha256(json.dumps(card, sort_keys=True).encode()).hexdigest()
    return LoadedAgent(
        root,
        None,
        name,
        card_url,
        digest,
        turn_timeout=TURN_TIMEOUT,
        unanswered=lambda session: unanswered(session, name),
    )


#: A task's ends that are no answer (the A2A 1.0 names and the 0.3 ones).
_FAILED_STATES = frozenset(
    {"TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
    | {"failed", "canceled", "rejected"}
)


def unanswered(session: dict[str, Any], root: str) -> str | None:
    """Why the peer did not answer in ``session``, or None: google-adk's error event of the
    root (a refused card, an HTTP error, a stream cut short), or a task of the peer that
    ended failed, cancelled or rejected (whose error text google-adk gives as the answer)."""
    for event in session.get("events") or []:
        if not isinstance(event, dict) or event.get("author") != root:
            continue
        said = event.get("errorMessage") or event.get("errorCode")
        if said:
            return f"the A2A peer did not answer: {said}"
        metadata = event.get("customMetadata") or {}
        response = metadata.get("a2a:response") if isinstance(metadata, dict) else None
        status = response.get("status") if isinstance(response, dict) else None
        state = status.get("state") if isinstance(status, dict) else None
        if state in _FAILED_STATES:
            text = "".join(
                str(part.get("text") or "")
                for part in ((event.get("content") or {}).get("parts") or [])
                if isinstance(part, dict)
            )
            return f"the A2A peer did not answer: its task ended {state}: {text[:200]}".rstrip(": ")
    return None


class A2APeerSource(InProcessSource):
    """An A2A peer, by its agent card's URL: google-adk's ``RemoteA2aAgent`` runs here (its
    spans are recorded here), the peer's tools run on the peer, and it answers messages, not a
    live stream."""

    kind = "an A2A peer"
    capabilities = Capabilities(spans=True, processes=True)

    @classmethod
    def recognise(cls, agent: Any) -> AgentSource | None:
        return cls(agent) if isinstance(agent, str) and is_a2a_card(agent) else None

    async def load(self) -> LoadedAgent:
        return await a2a_peer(self.spec)
