"""An agent span whose output messages are the whole turn, with no LLM span below it (the
Claude Agent SDK's ``query``): each text and call it made, in order, each call followed by the
tool span that ran it (the tool spans below that one first: an agent used as a tool)."""

from __future__ import annotations

from google.genai import types as genai_types

from .. import genai_semconv as semconv
from ..containers import Span
from .turn import Turn, tool_call_id, tool_name


def read(turn: Turn, agents: list[Span], spans: list[Span]) -> set[str]:
    """Reads the outermost agent span's transcript when it made calls (a final answer alone is
    left to ``Turn.agent_output``); returns the ids of the tool spans read."""
    outputs: list[genai_types.Content] = []
    agent = None
    for agent in sorted(agents, key=turn.tree.depth):
        outputs = semconv.messages(
            agent.attributes.get(semconv.OUTPUT_MESSAGES),
            f"span {agent.span_id} output",
            turn.notes,
        )
        if outputs:
            break
    calls = [p.function_call for m in outputs for p in m.parts or [] if p.function_call]
    if agent is None or not calls:
        return set()
    tools = [s for s in spans if s.operation == "execute_tool"]
    tool_ids = {s.span_id for s in tools}
    #: Each tool span's nearest tool span above it (an agent used as a tool), or None.
    outer_tool = {
        s.span_id: next((a.span_id for a in turn.tree.ancestors(s) if a.span_id in tool_ids), None)
        for s in tools
    }
    done: set[str] = set()

    def run(tool: Span) -> None:
        done.add(tool.span_id)
        for inner in tools:
            if inner.span_id not in done and outer_tool[inner.span_id] == tool.span_id:
                run(inner)
        turn.tool(tool, in_order=True)

    def span_of(call: genai_types.FunctionCall) -> Span | None:
        unread = [s for s in tools if s.span_id not in done and outer_tool[s.span_id] is None]
        by_id = [s for s in unread if call.id and tool_call_id(s) == call.id]
        by_name = [s for s in unread if tool_name(s) == call.name]
        return next(iter(by_id or by_name), None)

    for message in outputs:
        turn.model_content(agent, message)
        for part in message.parts or []:
            tool = span_of(part.function_call) if part.function_call else None
            if tool is not None:
                run(tool)
    for tool in tools:
        if tool.span_id not in done and outer_tool[tool.span_id] is None:
            run(tool)
    return done
