"""ADK session exports (snake_case or camelCase, including pre-1.0 dumps) -> AgentData.

Events are grouped into turns by invocation id, in order of first appearance; authors, function
calls and responses (as parts), state deltas and timestamps are kept.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.genai import types as genai_types
from pydantic.alias_generators import to_camel

from ..formats._problems import FormatError, Problem
from ..types import AgentConfig, AgentData, AgentEvent, ConversationTurn
from ._content import read_content
from ._conversation import Conversation


def _get(data: dict[str, Any], snake: str) -> Any:
    """A key of an export written in snake_case or camelCase."""
    return data[snake] if snake in data else data.get(to_camel(snake))


def _content(
    raw: Any, where: str, file: str | None, notes: list[str]
) -> genai_types.Content | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise FormatError([Problem(file, where, "expected a content object {role, parts}")])
    return read_content(raw, where, notes)


def _time(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (ValueError, OverflowError, OSError):
            return None
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _name(value: Any, default: str, file: str | None, where: str) -> str:
    """An author or invocation id: a string (numbers are tolerated), else a FormatError."""
    if value is None or value == "":
        return default
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise FormatError([Problem(file, where, "expected a string")])


#: The key of an event's ``customMetadata`` under which ``run --agent`` saves what its agent
#: was given in that turn (an AgentConfig: the system instruction as sent, the tool
#: declarations), on the agent's first event of each turn: ADK's judged criteria read it as
#: the app details adk eval records, and a saved session is judged as the run was.
AGENT_CONFIG_KEY = "platform_eval_agent"


def _agent_config(raw: dict[str, Any], source: str | None, where: str) -> AgentConfig | None:
    given = _dict(_get(raw, "custom_metadata")).get(AGENT_CONFIG_KEY)
    if given is None:
        return None
    try:
        return AgentConfig.model_validate(given)
    except ValueError as exc:
        problem = f"expected an AgentConfig ({str(exc).splitlines()[0]})"
        raise FormatError(
            [Problem(source, f"{where}.customMetadata.{AGENT_CONFIG_KEY}", problem)]
        ) from None


def session_to_conversation(session: dict[str, Any], *, source: str | None = None) -> Conversation:
    """One ADK session as one conversation."""
    if not isinstance(session, dict) or not isinstance(session.get("events"), list):
        raise FormatError(
            [Problem(source, "$.events", "expected an ADK session with a list of events")]
        )
    turns: dict[str, list[AgentEvent]] = {}
    grounded: dict[str, dict[str, Any]] = {}
    authors: list[str] = []
    #: What each agent was given, as the run saved it (its first turn's: ``with_agents``).
    given: dict[str, AgentConfig] = {}
    #: Where an agent was given something else in a later turn: turn -> agent -> its config.
    turn_agents: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    skipped_partial = 0
    set_by_run: set[str] = set()
    for index, raw in enumerate(session["events"]):
        if not isinstance(raw, dict):
            raise FormatError([Problem(source, f"$.events[{index}]", "expected an event object")])
        where = f"$.events[{index}]"
        if _get(raw, "partial") is True or _dict(raw.get("options")).get("partial") is True:
            skipped_partial += 1
            continue
        content = _content(raw.get("content"), f"{where}.content", source, notes)
        state_delta = _get(_dict(raw.get("actions")), "state_delta") or None
        if state_delta is not None and not isinstance(state_delta, dict):
            raise FormatError(
                [Problem(source, f"{where}.actions", "expected a state delta object")]
            )
        set_by_run.update(state_delta or ())
        grounding = _get(raw, "grounding_metadata")
        if grounding is not None and not isinstance(grounding, dict):
            raise FormatError([Problem(source, f"{where}.groundingMetadata", "expected an object")])
        if content is None and not state_delta and not grounding:
            continue
        author = _name(raw.get("author"), "unknown", source, f"{where}.author")
        config = _agent_config(raw, source, where)
        invocation = _name(
            _get(raw, "invocation_id"), f"event-{index}", source, f"{where}.invocationId"
        )
        if config is not None:
            config = config.model_copy(update={"agent_id": config.agent_id or author})
            if author not in given:
                given[author] = config
            elif config != given[author]:
                # Given something else in this turn (an instruction that reads the state).
                wire = config.model_dump(mode="json", by_alias=True, exclude_none=True)
                turn_agents.setdefault(invocation, {})[author] = wire
        if content is not None and author != "user" and author not in authors:
            authors.append(author)
        turn = turns.setdefault(invocation, [])
        if grounding:
            grounded.setdefault(invocation, {})[str(len(turn))] = grounding
        turn.append(
            AgentEvent(
                author=author,
                content=content,
                event_time=_time(raw.get("timestamp")),
                state_delta=state_delta,
            )
        )
    if skipped_partial:
        notes.append(f"{skipped_partial} partial (streaming) events skipped")
    state_only = [
        i
        for i, events in turns.items()
        if all(e.content is None for e in events) and i not in grounded
    ]
    for invocation_id in state_only:
        del turns[invocation_id]
    for events in turns.values():
        for position, event in enumerate(events):
            if event.content is None:
                # A state change or grounding alone: the service requires an event's content,
                # and an empty one stands for none (ADK's judged criteria get None back).
                empty = genai_types.Content(role="model", parts=[])
                events[position] = event.model_copy(update={"content": empty})
    if state_only:
        notes.append(f"{len(state_only)} invocations with only state changes are not turns")
    for invocation_id, events in turns.items():
        if not any(e.author == "user" for e in events):
            notes.append(
                f"turn {invocation_id}: no user message (an api_server /run answer holds only "
                "the agent's events; the user's message was in the request)"
            )
    agent_data = AgentData(
        agents={a: given.get(a) or AgentConfig(agent_id=a) for a in authors} or None,
        turns=[
            ConversationTurn(turn_index=i, turn_id=invocation_id, events=events)
            for i, (invocation_id, events) in enumerate(turns.items())
        ],
    )
    session_id = str(session.get("id") or source or "session")
    return Conversation(
        id=session_id,
        agent_data=agent_data,
        source=source,
        notes=notes,
        grounding=grounded,
        session_input=_session_input(session, set_by_run),
        state_set_by_run=sorted(k for k in _dict(session.get("state")) if k in set_by_run),
        final_state=_final_state(session, source),
        turn_agents={t: agents for t, agents in turn_agents.items() if t in turns},
    )


def _session_input(session: dict[str, Any], set_by_run: set[str]) -> dict[str, Any] | None:
    """The session's app, user and starting state: its state at the end, less the keys its own
    events set (their values before the run are not recorded)."""
    app, user = _get(session, "app_name"), _get(session, "user_id")
    if not isinstance(app, str) or not isinstance(user, str) or not app or not user:
        return None
    state = _dict(session.get("state"))
    return {
        "app_name": app,
        "user_id": user,
        "state": {k: v for k, v in state.items() if k not in set_by_run},
    }


def _final_state(session: dict[str, Any], source: str | None) -> dict[str, Any] | None:
    """The session's state as recorded (``temp:`` keys are never kept by ADK's services), or
    None where the export has none."""
    state = session.get("state")
    if state is None:
        return None
    if not isinstance(state, dict):
        raise FormatError([Problem(source, "$.state", "expected the session's state object")])
    return {k: v for k, v in state.items() if not str(k).startswith("temp:")}
