"""OpenTelemetry spans of agents -> AgentData.

Spans come from any container ``containers`` reads, in any dialect ``dialects`` translates to
the GenAI semantic conventions. The traces of one session (``gen_ai.conversation.id``,
``gcp.vertex.agent.session_id``, ``session.id``) are one conversation, else each trace is one.
Within it, every invocation root (``invoke_workflow``, ``invocation``), or else every top-level
``invoke_agent`` span, is one turn:

* the user message is the last user text in the ``contents`` of the turn's first LLM request
  (``gcp.vertex.agent.llm_request``);
* each ``call_llm`` span's response (``gcp.vertex.agent.llm_response``) is an event of the agent
  that made it (the nearest ``invoke_agent`` above it): function calls and text;
* each ``execute_tool`` span is the tool's response (``gcp.vertex.agent.tool_response``); its
  call (``gen_ai.tool.name`` and ``gcp.vertex.agent.tool_call_args``) is added when no LLM
  response carried it;
* the final response is the last text the agent produced in the turn;
* where no LLM span carries content, the agent span's own input and output messages are the
  user's message and the final response.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from google.genai import types as genai_types

from ..formats._problems import FormatError, Problem
from ..types import AgentConfig, AgentData, AgentEvent, ConversationTurn
from . import genai_semconv as semconv
from ._content import read_content
from ._conversation import Conversation
from .containers import Span
from .dialects import normalize_trace

LLM_REQUEST = "gcp.vertex.agent.llm_request"
LLM_RESPONSE = "gcp.vertex.agent.llm_response"
TOOL_ARGS_KEYS = ("gcp.vertex.agent.tool_call_args", "gen_ai.tool.call.arguments")
TOOL_RESULT_KEYS = ("gcp.vertex.agent.tool_response", "gen_ai.tool.call.result")
#: LLM spans of the GenAI semantic conventions (ADK schema v2 writes ``generate_content``).
SEMCONV_LLM_OPERATIONS = ("generate_content", "chat", "text_completion")
#: Attributes naming the session a trace belongs to: its traces are one conversation.
CONVERSATION_KEYS = ("gen_ai.conversation.id", "gcp.vertex.agent.session_id", "session.id")
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


# -- spans to conversations -------------------------------------------------------------------


def _json_attribute(span: Span, key: str) -> Any:
    # None when absent, or cut short by an attribute length limit.
    return semconv.parse_json(span.attributes.get(key))


def _latest_user_text(
    newest_first: Iterable[genai_types.Content | None],
) -> genai_types.Content | None:
    """The turn's user message: the newest message the user wrote with text in it. Lazy, so a
    long history is read only back to it."""
    for message in newest_first:
        if message and message.role == "user" and any(p.text for p in message.parts or []):
            return message
    return None


def _user_message(request: Any) -> genai_types.Content | None:
    if not isinstance(request, dict):
        return None
    contents = request.get("contents") or []
    return _latest_user_text(read_content(raw) for raw in reversed(contents))


class _Tree:
    def __init__(self, spans: list[Span]) -> None:
        self.by_id = {s.span_id: s for s in spans}
        self.children: dict[str, list[Span]] = defaultdict(list)
        for span in spans:
            if span.parent_id and span.parent_id in self.by_id:
                self.children[span.parent_id].append(span)

    def ancestors(self, span: Span) -> Iterator[Span]:
        seen = set()
        current = self.by_id.get(span.parent_id or "")
        while current is not None and current.span_id not in seen:
            seen.add(current.span_id)
            yield current
            current = self.by_id.get(current.parent_id or "")

    def descendants(self, span: Span) -> list[Span]:
        out, stack = [], list(self.children.get(span.span_id, []))
        while stack:
            child = stack.pop()
            out.append(child)
            stack.extend(self.children.get(child.span_id, []))
        return sorted(out, key=lambda s: s.start_ns)


def _agent_name(span: Span) -> str | None:
    name = span.attributes.get("gen_ai.agent.name")
    if name:
        return str(name)
    parts = span.name.split(" ", 1)
    return parts[1] if len(parts) == 2 else None


def _register_agent(agents: dict[str, AgentConfig], span: Span) -> None:
    name = _agent_name(span)
    if name is None:
        return
    config = agents.setdefault(name, AgentConfig(agent_id=name))
    description = span.attributes.get("gen_ai.agent.description")
    if description and not config.description:
        config.description = str(description)


def _part_event(author: str, role: str, part: genai_types.Part, span: Span) -> AgentEvent:
    content = genai_types.Content(role=role, parts=[part])
    return AgentEvent(author=author, content=content, event_time=_time(span))


def _time(span: Span) -> datetime | None:
    if not span.start_ns:
        return None
    try:
        return datetime.fromtimestamp(span.start_ns / 1e9, UTC)
    except (ValueError, OverflowError, OSError):
        return None  # a time no clock can show is no time


def _is_legacy_llm(span: Span) -> bool:
    return span.operation == "call_llm" or span.name == "call_llm"


def _is_semconv_llm(span: Span) -> bool:
    return span.operation in SEMCONV_LLM_OPERATIONS and not _is_legacy_llm(span)


def _declare_tool(config: AgentConfig, name: str, description: Any) -> None:
    declared = {d.name for t in config.tools or [] for d in t.function_declarations or []}
    if name in declared:
        return
    declaration = genai_types.FunctionDeclaration(
        name=name, description=str(description) if description else None
    )
    config.tools = [*(config.tools or []), genai_types.Tool(function_declarations=[declaration])]


class _TurnReader:
    """The events of one turn: the user's message, then what each agent said and called."""

    def __init__(
        self, tree: _Tree, agents: dict[str, AgentConfig], notes: list[str], turn_span: Span
    ) -> None:
        self.tree, self.agents, self.notes, self.turn_span = tree, agents, notes, turn_span
        self.events: list[AgentEvent] = []
        self.user: genai_types.Content | None = None
        #: Calls an LLM made whose tool span has not been read yet, oldest first.
        self.pending: list[genai_types.FunctionCall] = []
        #: Ids of the calls made in this turn, and of those whose response is among the events.
        self.called: dict[str, str | None] = {}
        self.answered: set[str] = set()
        self.content_seen = False

    def author_of(self, span: Span) -> str:
        for candidate in (span, *self.tree.ancestors(span)):
            if candidate.operation == "invoke_agent" and _agent_name(candidate):
                return str(_agent_name(candidate))
        return str(span.attributes.get("gen_ai.agent.name") or "agent")

    def read(self) -> list[AgentEvent]:
        spans = self.tree.descendants(self.turn_span)
        if _is_legacy_llm(self.turn_span) or _is_semconv_llm(self.turn_span):
            spans = [self.turn_span, *spans]  # a bare LLM call is its own turn
        # ADK's schema v1 writes call_llm spans (with content) around generate_content spans
        # (without): read the semconv spans only where there are no call_llm spans.
        legacy = any(_is_legacy_llm(s) for s in spans)
        agents = [self.turn_span, *(s for s in spans if s.operation == "invoke_agent")]
        read_tools: set[str] = set()
        if not legacy and not any(_is_semconv_llm(s) for s in spans):
            read_tools = self.transcript(agents, spans)
        for span in spans:
            if span.operation == "invoke_agent":
                _register_agent(self.agents, span)
            elif _is_legacy_llm(span):
                self.legacy_llm(span)
            elif not legacy and _is_semconv_llm(span):
                self.semconv_llm(span)
            elif span.operation == "execute_tool" and span.span_id not in read_tools:
                self.tool(span)
        if self.user is None:
            self.user = self.agent_input(agents)
        if not any(e.author != "user" and _has_text(e) for e in self.events):
            self.agent_output(agents)
        if self.user is not None:
            self.events.insert(
                0, AgentEvent(author="user", content=self.user, event_time=_time(self.turn_span))
            )
        else:
            self.notes.append(
                f"turn {self.turn_span.span_id}: no user message found in the LLM request"
            )
        return self.events

    def transcript(self, agents: list[Span], spans: list[Span]) -> set[str]:
        """An agent span whose output messages are the whole turn, with no LLM span below it
        (the Claude Agent SDK's ``query``): each text and call it made, in order, each call
        followed by the tool span that ran it (tool spans below that one first). Returns the
        ids of the tool spans read."""
        outputs: list[genai_types.Content] = []
        agent = None
        for agent in sorted(agents, key=lambda s: sum(1 for _ in self.tree.ancestors(s))):
            outputs = semconv.messages(
                agent.attributes.get(semconv.OUTPUT_MESSAGES),
                f"span {agent.span_id} output",
                self.notes,
            )
            if outputs:
                break
        calls = [p.function_call for m in outputs for p in m.parts or [] if p.function_call]
        if agent is None or not calls:
            return set()  # a final answer alone: agent_output reads it
        tools = [s for s in spans if s.operation == "execute_tool"]
        tool_ids = {s.span_id for s in tools}
        #: Each tool span's nearest tool span above it (an agent used as a tool), or None.
        outer_tool = {
            s.span_id: next(
                (a.span_id for a in self.tree.ancestors(s) if a.span_id in tool_ids), None
            )
            for s in tools
        }
        done: set[str] = set()

        def run(tool: Span) -> None:
            done.add(tool.span_id)
            for inner in tools:
                if inner.span_id not in done and outer_tool[inner.span_id] == tool.span_id:
                    run(inner)
            self.tool(tool)

        def span_of(call: genai_types.FunctionCall) -> Span | None:
            unread = [s for s in tools if s.span_id not in done and outer_tool[s.span_id] is None]
            by_id = [s for s in unread if call.id and _tool_call_id(s) == call.id]
            by_name = [s for s in unread if _tool_name(s) == call.name]
            return next(iter(by_id or by_name), None)

        for message in outputs:
            self.model_content(agent, message)
            for part in message.parts or []:
                tool = span_of(part.function_call) if part.function_call else None
                if tool is not None:
                    run(tool)
        for tool in tools:
            if tool.span_id not in done and outer_tool[tool.span_id] is None:
                run(tool)
        return done

    def agent_input(self, agents: list[Span]) -> genai_types.Content | None:
        """The user's message as an agent span recorded it (its input messages)."""
        for span in agents:
            inputs = semconv.messages(
                span.attributes.get(semconv.INPUT_MESSAGES),
                f"span {span.span_id} input",
                self.notes,
            )
            if found := _latest_user_text(reversed(inputs)):
                return found
        return None

    def agent_output(self, agents: list[Span]) -> None:
        """The final answer as the outermost agent span that recorded one gives it."""
        for span in sorted(agents, key=lambda s: sum(1 for _ in self.tree.ancestors(s))):
            outputs = semconv.messages(
                span.attributes.get(semconv.OUTPUT_MESSAGES),
                f"span {span.span_id} output",
                self.notes,
            )
            texts = [m for m in outputs if any(p.text for p in m.parts or [])]
            if texts:
                self.model_content(span, texts[-1])
                return

    def model_content(self, span: Span, content: genai_types.Content) -> None:
        self.content_seen = True
        if content.role is None:
            content.role = "model"
        for part in content.parts or []:
            if part.function_call:
                self.pending.append(part.function_call)
                if part.function_call.id:
                    self.called[part.function_call.id] = part.function_call.name
        self.events.append(
            AgentEvent(author=self.author_of(span), content=content, event_time=_time(span))
        )

    def instruction(self, span: Span, text: Any) -> None:
        author = self.author_of(span)
        if isinstance(text, str) and author in self.agents and not self.agents[author].instruction:
            self.agents[author].instruction = text

    def legacy_llm(self, span: Span) -> None:
        request = _json_attribute(span, LLM_REQUEST)
        if self.user is None:
            self.user = _user_message(request)
        if isinstance(request, dict):
            self.instruction(span, (request.get("config") or {}).get("system_instruction"))
        response = _json_attribute(span, LLM_RESPONSE)
        content = (
            read_content(response.get("content"), f"span {span.span_id} LLM response", self.notes)
            if isinstance(response, dict)
            else None
        )
        if content is None:
            if span.attributes.get(LLM_RESPONSE):
                self.notes.append(f"span {span.span_id}: LLM response unreadable (truncated?)")
            return
        self.model_content(span, content)

    def semconv_llm(self, span: Span) -> None:
        where = f"span {span.span_id}"
        # The request holds the whole conversation so far: read it only for what is missing,
        # the user's message or a response to this turn's calls, not at every LLM call.
        if self.user is None or self.called.keys() - self.answered:
            inputs = semconv.messages(
                span.attributes.get(semconv.INPUT_MESSAGES), f"{where} input", self.notes
            )
            self.tool_responses(span, inputs)
            if self.user is None:
                self.user = _latest_user_text(reversed(inputs))
        self.instruction(
            span, semconv.system_text(span.attributes.get(semconv.SYSTEM_INSTRUCTIONS))
        )
        outputs = semconv.messages(
            span.attributes.get(semconv.OUTPUT_MESSAGES), f"{where} output", self.notes
        )
        for content in outputs:
            self.model_content(span, content)

    def tool_responses(self, span: Span, inputs: list[genai_types.Content]) -> None:
        """The responses to this turn's calls that an LLM request carries and no tool span did
        (ADK records tool results only with content on spans; the next request has them)."""
        latest: dict[str, genai_types.FunctionResponse] = {}
        for message in inputs:
            for part in message.parts or []:
                if part.function_response and part.function_response.id:
                    # The history may hold an earlier turn's call of the same id: the last wins.
                    latest[part.function_response.id] = part.function_response
        for call_id, response in latest.items():
            if call_id in self.called and call_id not in self.answered:
                self.answered.add(call_id)
                if not response.name:
                    response = response.model_copy(update={"name": self.called[call_id]})
                part = genai_types.Part(function_response=response)
                self.events.append(_part_event(self.author_of(span), "user", part, span))

    def take_pending(self, call_id: str | None, name: str) -> genai_types.FunctionCall | None:
        """The LLM's call this tool span answers: by id, else the oldest of that name."""
        by_id = [i for i, c in enumerate(self.pending) if call_id and c.id == call_id]
        by_name = [i for i, c in enumerate(self.pending) if c.name == name]
        found = by_id or by_name
        if not found:
            return None
        call = self.pending.pop(found[0])
        if call.id is None and call_id:
            # The tool span knows the id the LLM's record left out: pair the two by it.
            call.id = call_id
        return call

    def tool(self, span: Span) -> None:
        author = self.author_of(span)
        name = _tool_name(span)
        call_id = _tool_call_id(span)
        _declare_tool(
            self.agents.setdefault(author, AgentConfig(agent_id=author)),
            name,
            span.attributes.get("gen_ai.tool.description"),
        )
        call = self.take_pending(call_id, name)
        if call is None:
            raw_args = next(
                (span.attributes[k] for k in TOOL_ARGS_KEYS if k in span.attributes), None
            )
            if raw_args is None:
                self.notes.append(f"span {span.span_id}: the arguments of {name} were not recorded")
            args = semconv.parse_json(raw_args)
            call = genai_types.FunctionCall(
                id=call_id, name=name, args=args if isinstance(args, dict) else {}
            )
            self.events.append(
                _part_event(author, "model", genai_types.Part(function_call=call), span)
            )
        raw_result = next(
            (span.attributes[k] for k in TOOL_RESULT_KEYS if span.attributes.get(k)), None
        )
        if raw_result is None and span.attributes.get("error.type"):
            raw_result = {"error": str(span.attributes["error.type"])}
        if raw_result is None:
            return
        result = semconv.parse_json(raw_result)
        if result is None:
            result = {"result": str(raw_result)}
        if call.id:
            self.answered.add(call.id)
        response = genai_types.FunctionResponse(
            id=call.id or call_id,
            name=name,
            response=result if isinstance(result, dict) else {"result": result},
        )
        self.events.append(
            _part_event(author, "user", genai_types.Part(function_response=response), span)
        )


def _tool_name(span: Span) -> str:
    return str(span.attributes.get("gen_ai.tool.name") or span.name.split(" ", 1)[-1])


def _tool_call_id(span: Span) -> str | None:
    raw = span.attributes.get("gen_ai.tool.call.id")
    return str(raw) if raw else None


def _has_text(event: AgentEvent) -> bool:
    parts = event.content.parts if event.content else None
    return any(p.text and not p.thought for p in parts or [])


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


def _top_invocations(tree: _Tree, spans: list[Span]) -> list[Span]:
    """The span of each turn: the invocation root, or else each outermost agent span."""
    roots = [
        s
        for s in spans
        if _is_invocation_root(s)
        and not any(_is_invocation_root(a) for a in tree.ancestors(s))
        and any(d.operation == "invoke_agent" for d in tree.descendants(s))
    ]
    agents = [
        s
        for s in spans
        if s.operation == "invoke_agent"
        and not any(a.operation == "invoke_agent" for a in tree.ancestors(s))
    ]
    if roots or agents:
        return roots or agents
    # No agent span at all (a bare LLM instrumentation): the top span above the LLM calls.
    llm = [s for s in spans if _is_legacy_llm(s) or _is_semconv_llm(s)]
    tops = {id(([s, *tree.ancestors(s)])[-1]): ([s, *tree.ancestors(s)])[-1] for s in llm}
    return sorted(tops.values(), key=lambda s: s.start_ns)


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
    sessions: dict[str, list[tuple[_Tree, Span]]] = defaultdict(list)
    session_traces: dict[str, list[str]] = defaultdict(list)
    for trace_id, trace_spans in by_trace.items():
        tree = _Tree(trace_spans)
        top = _top_invocations(tree, trace_spans)
        if not top:
            continue
        session = _conversation_id(trace_spans) or trace_id
        sessions[session].extend((tree, s) for s in top)
        session_traces[session].append(trace_id)
    conversations = []
    for session, invocations in sessions.items():
        agents: dict[str, AgentConfig] = {}
        notes: list[str] = []
        turns: list[ConversationTurn] = []
        content_seen = False
        for tree, turn_span in sorted(invocations, key=lambda pair: pair[1].start_ns):
            if turn_span.operation == "invoke_agent":
                _register_agent(agents, turn_span)
            reader = _TurnReader(tree, agents, notes, turn_span)
            events = reader.read()
            content_seen = content_seen or reader.content_seen or reader.user is not None
            if any(e.author != "user" for e in events):
                turns.append(
                    ConversationTurn(
                        turn_index=len(turns), turn_id=turn_span.span_id, events=events
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
                agent_data=AgentData(agents=agents or None, turns=turns),
                source=source,
                notes=notes,
            )
        )
    return conversations
