"""What every mapper shares: the state of one turn as it is read, and how it reads agents.

A turn's events come in the order things happened: a model's text and calls when its span
starts, a tool's answer when its span ends. That keeps nested agents in place: an agent used
as a tool (``AgentTool``, OpenAI's agents as tools, an A2A peer) runs between its caller's call
and the answer, so its own events sit between the two, each with its own author.

A call is read once, wherever it was recorded: from the model's output messages, from the
tool span that ran it, or both (then paired by id, else by name, oldest first). Its answer is
read from the tool span, or else from the next model request that carries it, and is authored
by the agent that made the call (as ADK authors a function response).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from google.genai import types as genai_types

from ...types import AgentConfig, AgentEvent
from .. import genai_semconv as semconv
from ..containers import Span
from ..span_tree import SpanTree

TOOL_ARGS_KEYS = ("gcp.vertex.agent.tool_call_args", "gen_ai.tool.call.arguments")
TOOL_RESULT_KEYS = ("gcp.vertex.agent.tool_response", "gen_ai.tool.call.result")


def agent_name(span: Span) -> str | None:
    name = span.attributes.get("gen_ai.agent.name")
    if name:
        return str(name)
    parts = span.name.split(" ", 1)
    return parts[1] if len(parts) == 2 else None


def register_agent(agents: dict[str, AgentConfig], span: Span) -> None:
    name = agent_name(span)
    if name is None:
        return
    config = agents.setdefault(name, AgentConfig(agent_id=name))
    description = span.attributes.get("gen_ai.agent.description")
    if description and not config.description:
        config.description = str(description)


def span_time(span: Span) -> datetime | None:
    if not span.start_ns:
        return None
    try:
        return datetime.fromtimestamp(span.start_ns / 1e9, UTC)
    except (ValueError, OverflowError, OSError):
        return None  # a time no clock can show is no time


def latest_user_text(
    newest_first: Iterable[genai_types.Content | None],
) -> genai_types.Content | None:
    """The turn's user message: the newest message the user wrote with text in it. Lazy, so a
    long history is read only back to it."""
    for message in newest_first:
        if message and message.role == "user" and any(p.text for p in message.parts or []):
            return message
    return None


def input_user_text(span: Span, notes: list[str]) -> genai_types.Content | None:
    """The newest user text of the span's input messages (``gen_ai.input.messages``)."""
    inputs = semconv.messages(
        span.attributes.get(semconv.INPUT_MESSAGES), f"span {span.span_id} input", notes
    )
    return latest_user_text(reversed(inputs))


def agent_input(agents: Iterable[Span], notes: list[str]) -> genai_types.Content | None:
    """The user's message as an agent span recorded it (its input messages)."""
    for span in agents:
        if found := input_user_text(span, notes):
            return found
    return None


def tool_name(span: Span) -> str:
    return str(span.attributes.get("gen_ai.tool.name") or span.name.split(" ", 1)[-1])


def tool_call_id(span: Span) -> str | None:
    raw = span.attributes.get("gen_ai.tool.call.id")
    return str(raw) if raw else None


def _declare_tool(config: AgentConfig, name: str, description: Any) -> None:
    declared = {d.name for t in config.tools or [] for d in t.function_declarations or []}
    if name in declared:
        return
    declaration = genai_types.FunctionDeclaration(
        name=name, description=str(description) if description else None
    )
    config.tools = [*(config.tools or []), genai_types.Tool(function_declarations=[declaration])]


def _part_event(author: str, role: str, part: genai_types.Part, span: Span) -> AgentEvent:
    content = genai_types.Content(role=role, parts=[part])
    return AgentEvent(author=author, content=content, event_time=span_time(span))


@dataclass
class _Call:
    name: str | None
    author: str


class Turn:
    """The events of one turn as its spans are read, oldest first."""

    def __init__(self, tree: SpanTree, agents: dict[str, AgentConfig], notes: list[str]) -> None:
        self.tree, self.agents, self.notes = tree, agents, notes
        self.events: list[AgentEvent] = []
        self.user: genai_types.Content | None = None
        #: Calls a model made whose tool span has not been read yet, oldest first.
        self.pending: list[tuple[genai_types.FunctionCall, str]] = []
        #: The calls made in this turn by id, and the ids whose answer is among the events.
        self.called: dict[str, _Call] = {}
        self.answered: set[str] = set()
        #: A model record's stand-in id of a call -> the id its tool span ran it under.
        self.ran_as: dict[str, str] = {}
        #: Tool answers not yet due: each with the time its span ended.
        self.later: list[tuple[int, AgentEvent]] = []
        self.content_seen = False

    # -- order ------------------------------------------------------------------------------

    def reach(self, span: Span) -> None:
        """Read up to ``span``'s start: the answers of tools that ended before it are due."""
        due = [entry for entry in self.later if entry[0] <= span.start_ns]
        if due:
            self.later = [entry for entry in self.later if entry[0] > span.start_ns]
            self.events.extend(event for _, event in due)

    def finish(self) -> None:
        self.events.extend(event for _, event in self.later)
        self.later = []

    # -- who said it ------------------------------------------------------------------------

    def author_of(self, span: Span) -> str:
        for candidate in (span, *self.tree.ancestors(span)):
            if candidate.operation == "invoke_agent" and agent_name(candidate):
                return str(agent_name(candidate))
        return str(span.attributes.get("gen_ai.agent.name") or "agent")

    def instruction(self, span: Span, text: Any) -> None:
        author = self.author_of(span)
        if isinstance(text, str) and author in self.agents and not self.agents[author].instruction:
            self.agents[author].instruction = text

    def offered_tools(self, span: Span, tools: list[genai_types.Tool] | None) -> None:
        """The tools a model request of the agent offered: what it was given, in place of
        those known only by their calls (a name and a description, no parameters)."""
        author = self.author_of(span)
        config = self.agents.get(author)
        if tools is None or config is None:
            return
        declared = [d for t in config.tools or [] for d in t.function_declarations or []]
        if any(d.parameters or d.parameters_json_schema for d in declared):
            return  # an earlier request's, kept as the agent's first
        if any(
            t.model_dump(exclude={"function_declarations"}, exclude_none=True)
            for t in config.tools or []
        ):
            return
        config.tools = tools

    # -- what the model said ----------------------------------------------------------------

    def model_content(self, span: Span, content: genai_types.Content) -> None:
        self.content_seen = True
        if content.role is None:
            content.role = "model"
        author = self.author_of(span)
        for part in content.parts or []:
            if part.function_call:
                self.pending.append((part.function_call, author))
                if part.function_call.id:
                    self.called[part.function_call.id] = _Call(part.function_call.name, author)
        self.events.append(AgentEvent(author=author, content=content, event_time=span_time(span)))

    def answers_in(self, span: Span, inputs: list[genai_types.Content]) -> None:
        """The answers to this turn's calls that a model request carries and no tool span did
        (a call carried out elsewhere: a handoff, an A2A peer, ADK recording tool results only
        in the next request)."""
        latest: dict[str, genai_types.FunctionResponse] = {}
        for message in inputs:
            for part in message.parts or []:
                if part.function_response and part.function_response.id:
                    # The history may hold an earlier turn's call of the same id: the last wins.
                    latest[part.function_response.id] = part.function_response
        for given_id, response in latest.items():
            call_id = self.ran_as.get(given_id, given_id)
            call = self.called.get(call_id)
            if call is None or call_id in self.answered:
                continue
            self.answered.add(call_id)
            self.pending = [(c, a) for c, a in self.pending if c.id != call_id]
            response = response.model_copy(
                update={"id": call_id, "name": response.name or call.name}
            )
            part = genai_types.Part(function_response=response)
            self.events.append(_part_event(call.author, "user", part, span))

    def unanswered(self) -> bool:
        return bool(self.called.keys() - self.answered)

    # -- what a tool did --------------------------------------------------------------------

    def take_pending(
        self, call_id: str | None, name: str
    ) -> tuple[genai_types.FunctionCall, str] | None:
        """The model's call this tool span answers: by id, else the oldest of that name."""
        by_id = [i for i, (c, _) in enumerate(self.pending) if call_id and c.id == call_id]
        by_name = [i for i, (c, _) in enumerate(self.pending) if c.name == name]
        found = by_id or by_name
        if not found:
            return None
        call, author = self.pending.pop(found[0])
        if call_id and call.id != call_id:
            # The tool span knows the id the call was run under, which the agent's events
            # carry: a model's record may leave it out, or hold a stand-in (ADK's GenAI spans
            # write ``<name>_<n>`` for a call the model gave no id, then run it as ``adk-...``).
            if call.id:
                self.ran_as[call.id] = call_id
                known = self.called.pop(call.id, None)
                if known is not None:
                    self.called[call_id] = known
            call.id = call_id
        return call, author

    def tool(self, span: Span, *, in_order: bool = False) -> None:
        """An ``execute_tool`` span: its call (unless a model's output carried it) and its
        answer, due when the span ended (``in_order``: at once)."""
        name = tool_name(span)
        call_id = tool_call_id(span)
        taken = self.take_pending(call_id, name)
        if taken is None:
            author = self.author_of(span)
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
        else:
            call, author = taken
        _declare_tool(
            self.agents.setdefault(author, AgentConfig(agent_id=author)),
            name,
            span.attributes.get("gen_ai.tool.description"),
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
        answer = _part_event(author, "user", genai_types.Part(function_response=response), span)
        if in_order:
            self.events.append(answer)
        else:
            self.later.append((max(span.end_ns, span.start_ns), answer))

    def handoff(self, span: Span, target: str | None) -> None:
        """A handoff span: the model's transfer call (read from its output) is the handoff's
        event; the span adds none of its own. Without that call, the move is only in the
        authors of what follows, and a note says so."""
        author = self.author_of(span)
        names = [c.name for c, a in self.pending if a == author]
        names += [c.name for c in self.called.values() if c.author == author]
        if target and any(target in (name or "") for name in names):
            return
        self.notes.append(
            f"span {span.span_id}: a handoff from {author} to {target or 'another agent'} that "
            "no model output recorded as a call"
        )

    # -- an agent span's own record ---------------------------------------------------------

    def agent_output(self, agents: list[Span]) -> None:
        """The final answer as the outermost agent span that recorded one gives it."""
        for span in sorted(agents, key=self.tree.depth):
            outputs = semconv.messages(
                span.attributes.get(semconv.OUTPUT_MESSAGES),
                f"span {span.span_id} output",
                self.notes,
            )
            texts = [m for m in outputs if any(p.text for p in m.parts or [])]
            if texts:
                self.model_content(span, texts[-1])
                return
