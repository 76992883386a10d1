"""OpenTelemetry spans of agents -> AgentData.

Spans come from any container ``containers`` reads, in any dialect ``dialects`` translates to
the GenAI semantic conventions. The traces of one session (``gen_ai.conversation.id``,
``gcp.vertex.agent.session_id``, ``session.id``) are one conversation, else each trace is one.
Within it, every invocation root (``invoke_workflow``, ``invocation``) is one turn; without
one, the top-level ``invoke_agent`` spans are, those one after another on the same question
(an agent and the agents it handed off to) making one turn together.

The spans of a turn are read in the order they started, each by the mapper of its dialect
(``mappers``): a model's texts and calls are events of the agent that made them (the nearest
``invoke_agent`` above), a tool span is its call (unless a model's output carried it) and its
answer. The user's message is the newest user text of the first request; where no LLM span
carries content, the agent span's own input and output messages are the user's message and
the final response.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ..formats._problems import FormatError, Problem
from ..types import AgentConfig, AgentData, AgentEvent, ConversationTurn
from ._conversation import Conversation
from .containers import Span
from .dialects import HANDOFF, handoff_target, normalize_trace
from .mappers import (
    Turn,
    adk_v1,
    agent_input,
    genai,
    input_user_text,
    register_agent,
    span_time,
    transcript,
)
from .span_tree import SpanTree

#: Attributes naming the session a trace belongs to: its traces are one conversation.
CONVERSATION_KEYS = ("gen_ai.conversation.id", "gcp.vertex.agent.session_id", "session.id")
#: The span attribute under which ``run --agent --save-traces`` keeps the session's state at
#: its end (JSON), on the last invocation span of the session: google-adk keeps state out of
#: its spans, and final_session_state_match reads it as a saved session's.
SESSION_STATE_KEY = "platform_eval.session.state"
NO_CONTENT_NOTE = (
    "no message content was recorded in these spans (no user message, no model output), so "
    "there is nothing to evaluate. Instrumentations record it only when asked: "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT for the GenAI conventions. ADK 2.x "
    "with that variable 'true' or EVENT_ONLY writes content to log records, not spans: export "
    "the logs too (OTLP, in this file or another) and pass both, or set it to SPAN_ONLY. "
    "ADK 1.x and ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1 record it unless "
    "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false. Record the agent again with content, or "
    "evaluate its session export instead"
)


# -- one turn ---------------------------------------------------------------------------------


def _is_llm(span: Span) -> bool:
    return adk_v1.is_llm(span) or genai.is_llm(span)


def _turn_spans(tree: SpanTree, roots: list[Span]) -> list[Span]:
    spans = {s.span_id: s for root in roots for s in tree.descendants(root)}
    for root in roots:
        if _is_llm(root) or root.operation == "invoke_agent":
            spans[root.span_id] = root  # a bare LLM call is its own turn; an agent, its author
    return sorted(spans.values(), key=lambda s: s.start_ns)


def _read_turn(
    tree: SpanTree, agents: dict[str, AgentConfig], notes: list[str], roots: list[Span]
) -> Turn:
    """The events of one turn: the user's message, then what each agent said and called."""
    turn = Turn(tree, agents, notes)
    spans = _turn_spans(tree, roots)
    agent_spans = [*roots, *(s for s in spans if s.operation == "invoke_agent" and s not in roots)]
    read_tools: set[str] = set()
    if not any(_is_llm(s) for s in spans):
        read_tools = transcript.read(turn, agent_spans, spans)
    for span in spans:
        turn.reach(span)
        if span.operation == "invoke_agent":
            register_agent(agents, span)
        elif adk_v1.is_llm(span):
            adk_v1.read_llm(turn, span)
        elif genai.is_read(span, tree):
            genai.read_llm(turn, span)
        elif span.operation == "execute_tool" and span.span_id not in read_tools:
            turn.tool(span)
        elif span.operation == HANDOFF:
            turn.handoff(span, handoff_target(span))
    turn.finish()
    if turn.user is None:
        turn.user = agent_input(agent_spans, notes)
    if not any(e.author != "user" and _has_text(e) for e in turn.events):
        turn.agent_output(agent_spans)
    if turn.user is not None:
        turn.events.insert(
            0, AgentEvent(author="user", content=turn.user, event_time=span_time(roots[0]))
        )
    else:
        notes.append(f"turn {roots[0].span_id}: no user message found in the LLM request")
    return turn


def _has_text(event: AgentEvent) -> bool:
    parts = event.content.parts if event.content else None
    return any(p.text and not p.thought for p in parts or [])


def _question(tree: SpanTree, span: Span) -> str | None:
    """The user's text an agent span starts from (for telling a handoff, which answers the
    same question, from a new turn): its own input, else its first request that has one."""
    notes: list[str] = []  # reading the turn reports them
    asked = agent_input([span], notes)
    for inner in tree.descendants(span):
        if asked is not None:
            break
        if adk_v1.is_llm(inner):
            asked = adk_v1.user_message(inner)
        elif genai.is_read(inner, tree):
            asked = input_user_text(inner, notes)
    if asked is None:
        return None
    return "\n".join(p.text for p in asked.parts or [] if p.text)


def _conversation_id(spans: Iterable[Span]) -> str | None:
    for span in spans:
        for key in CONVERSATION_KEYS:
            if span.attributes.get(key):
                return str(span.attributes[key])
    return None


def _is_invocation_root(span: Span) -> bool:
    # ADK writes one per user message: ``invoke_workflow`` (schema v2), ``invocation`` (v1),
    # ``invocation [app]`` (1.x); the agents it ran, a sub-agent after a transfer included,
    # sit below it.
    return span.operation in ("invoke_workflow", "invocation")


def _turn_roots(tree: SpanTree, spans: list[Span]) -> list[list[Span]]:
    """The spans of each turn: an invocation root; or else the outermost agent spans, those
    one after another under one parent on one question together (a handoff); or else, with no
    agent span at all (a bare LLM instrumentation), the top span above the LLM calls."""
    roots = [
        s
        for s in spans
        if _is_invocation_root(s)
        and not any(
            _is_invocation_root(a) or a.operation == "invoke_agent" for a in tree.ancestors(s)
        )
        and any(d.operation == "invoke_agent" for d in tree.descendants(s))
    ]
    if roots:
        return [[root] for root in roots]
    agents = sorted(
        (
            s
            for s in spans
            if s.operation == "invoke_agent"
            and not any(a.operation == "invoke_agent" for a in tree.ancestors(s))
        ),
        key=lambda s: s.start_ns,
    )
    if len(agents) == 1:
        return [agents]
    if agents:
        groups: list[list[Span]] = []
        asked: str | None = None
        for agent in agents:
            question = _question(tree, agent)
            same_turn = (
                groups
                and groups[-1][-1].parent_id == agent.parent_id
                and (question is None or question == asked)
            )
            if same_turn:
                groups[-1].append(agent)
            else:
                groups.append([agent])
                asked = question
        return groups
    llm = [s for s in spans if _is_llm(s)]
    tops = {id(([s, *tree.ancestors(s)])[-1]): ([s, *tree.ancestors(s)])[-1] for s in llm}
    return [[top] for top in sorted(tops.values(), key=lambda s: s.start_ns)]


def spans_to_conversations(spans: list[Span], source: str | None = None) -> list[Conversation]:
    """One conversation per session: the traces of one session id are its turns, in order.

    Raises FormatError when the spans hold no conversation, or no content at all, saying what
    was found and why nothing could be extracted.
    """
    conversations = _conversations(spans, source)
    if not conversations:
        names = sorted({s.name for s in spans})
        shown = ", ".join(names[:12]) + (
            f" (and {len(names) - 12} more)" if len(names) > 12 else ""
        )
        raise FormatError(
            [
                Problem(
                    source,
                    "$",
                    f"{len(spans)} spans, none of them an agent or LLM span (invoke_agent, "
                    "chat, generate_content, call_llm, or OpenInference AGENT/LLM); "
                    f"span names seen: {shown or 'none'}",
                )
            ]
        )
    if all(NO_CONTENT_NOTE in c.notes for c in conversations):
        raise FormatError([Problem(source, "$", NO_CONTENT_NOTE)])
    return conversations


def _conversations(spans: list[Span], source: str | None) -> list[Conversation]:
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        by_trace[span.trace_id].append(span)
    by_trace = {trace_id: normalize_trace(group) for trace_id, group in by_trace.items()}
    sessions: dict[str, list[tuple[SpanTree, list[Span]]]] = defaultdict(list)
    session_traces: dict[str, list[str]] = defaultdict(list)
    for trace_id, trace_spans in by_trace.items():
        tree = SpanTree(trace_spans)
        top = _turn_roots(tree, trace_spans)
        if not top:
            continue
        session = _conversation_id(trace_spans) or trace_id
        sessions[session].extend((tree, roots) for roots in top)
        session_traces[session].append(trace_id)
    conversations = []
    for session, invocations in sessions.items():
        agents: dict[str, AgentConfig] = {}
        notes: list[str] = []
        turns: list[ConversationTurn] = []
        content_seen = False
        for tree, roots in sorted(invocations, key=lambda pair: pair[1][0].start_ns):
            turn = _read_turn(tree, agents, notes, roots)
            content_seen = content_seen or turn.content_seen or turn.user is not None
            if any(e.author != "user" for e in turn.events):
                turns.append(
                    ConversationTurn(
                        turn_index=len(turns), turn_id=roots[0].span_id, events=turn.events
                    )
                )
        if not content_seen:
            notes.append(NO_CONTENT_NOTE)
        traces = session_traces[session]
        if session in by_trace or len(traces) > 1:
            conversation_id = session
        else:
            conversation_id = f"{session}/{traces[0]}"
        conversations.append(
            Conversation(
                id=conversation_id,
                session_id=None if session in by_trace else session,
                agent_data=AgentData(agents=agents or None, turns=turns),
                source=source,
                notes=notes,
                final_state=_final_state(
                    [span for trace in traces for span in by_trace[trace]], source
                ),
            )
        )
    return conversations


def _final_state(spans: list[Span], source: str | None) -> dict[str, Any] | None:
    """The session's state at its end where a span keeps it (the latest one that does), else
    None: spans of other recorders never say."""
    kept = [span for span in spans if SESSION_STATE_KEY in span.attributes]
    if not kept:
        return None
    latest = max(kept, key=lambda span: span.start_ns)
    try:
        state = json.loads(str(latest.attributes[SESSION_STATE_KEY]))
    except ValueError:
        state = None
    if not isinstance(state, dict):
        where = f"span {latest.span_id}: attribute {SESSION_STATE_KEY}"
        raise FormatError([Problem(source, where, "expected the session's state as JSON")])
    return state
