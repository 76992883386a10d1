"""Every span dialect said one way: the OpenTelemetry GenAI semantic conventions.

The conversation reader understands ADK's spans and the GenAI conventions
(``gen_ai.operation.name``, ``gen_ai.input.messages`` / ``gen_ai.output.messages`` JSON,
``gen_ai.tool.*``). Other dialects are translated into those attributes here, one span at a
time, before the reader sees them; an attribute already present is never overwritten:

* the messages of a ``gen_ai.client.inference.operation.details`` event, the older per-message
  events (``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``,
  ``gen_ai.tool.message``, ``gen_ai.choice``) and OpenLLMetry's ``gen_ai.prompt.N.*`` /
  ``gen_ai.completion.N.*`` attributes and ``gen_ai.content.prompt`` / ``.completion`` events;
* OpenInference (Arize Phoenix; LangChain, LangGraph, Claude Agent SDK, ...):
  ``openinference.span.kind`` AGENT, CHAIN, LLM and TOOL, ``llm.input_messages.N.message.*``,
  ``tool.name``, ``input.value`` / ``output.value``;
* ADK 1.x span names (``agent_run [name]``, ``invocation [app]``); Traceloop's (OpenLLMetry's)
  workflow spans, model calls (``llm.request.type``) and tool spans (``traceloop.span.kind`` or
  agntcy's ``ioa_observe.span.kind`` ``tool``: the entity's name, input and output);
* an agent's own input and output (OpenInference ``input.value``/``output.value``, Pydantic AI's
  ``final_result``) as that agent span's messages.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections import defaultdict
from typing import Any

from .containers import Span, SpanEvent
from .genai_semconv import INPUT_MESSAGES, OUTPUT_MESSAGES, SYSTEM_INSTRUCTIONS, parse_json
from .span_tree import SpanTree

OPENINFERENCE_KIND = "openinference.span.kind"
OPERATION = "gen_ai.operation.name"
#: The GenAI operation each OpenInference span kind is.
_OPENINFERENCE_OPERATIONS = {
    "AGENT": "invoke_agent",
    "LLM": "chat",
    "TOOL": "execute_tool",
}
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_LEGACY_ADK = re.compile(r"^(agent_run|invocation) \[(.+)\]$")
#: A handoff span's name (OpenInference, Sentry): ``handoff to B``, ``handoff from A to B``.
_HANDOFF = re.compile(r"^handoff (?:from (?P<source>.+) )?to (?P<target>.+)$")
HANDOFF = "handoff"


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "content": text}


def _tool_call_part(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    return {
        "type": "tool_call",
        "id": call_id,
        "name": name,
        "arguments": parse_json(arguments) or arguments,
    }


def _openai_message(raw: dict[str, Any], role: str | None = None) -> dict[str, Any] | None:
    """``{role, content, tool_calls, tool_call_id}`` (the OpenAI chat shape) as a semconv
    message ``{role, parts}``."""
    role = str(raw.get("role") or role or "")
    if not role:
        return None
    parts: list[dict[str, Any]] = []
    content = raw.get("content")
    if role == "tool" and content is not None:
        parts.append(
            {
                "type": "tool_call_response",
                "id": raw.get("tool_call_id") or raw.get("id"),
                # A tool's answer in plain text is kept as text, not read as broken JSON.
                "response": content,
            }
        )
    elif isinstance(content, str) and content:
        parts.append(_text_part(content))
    elif isinstance(content, list):
        parts += [
            _text_part(str(c.get("text"))) for c in content if isinstance(c, dict) and c.get("text")
        ]
    for call in raw.get("tool_calls") or []:
        if isinstance(call, dict):
            nested = call.get("function")
            function: dict[str, Any] = nested if isinstance(nested, dict) else call
            parts.append(
                _tool_call_part(call.get("id"), function.get("name"), function.get("arguments"))
            )
    return {"role": role, "parts": parts} if parts else None


def _indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.0.role``, ``prefix.0.content``, ``prefix.0.tool_calls.1.name``, ... as a list of
    nested dicts, in index order."""
    tree: dict[int, dict[str, Any]] = defaultdict(dict)
    start = prefix + "."
    for key, value in attributes.items():
        if not key.startswith(start):
            continue
        index, _, rest = key[len(start) :].partition(".")
        if not index.isdigit() or not rest:
            continue
        node = tree[int(index)]
        path = rest.split(".")
        for step in path[:-1]:
            node = node.setdefault(step, {})
        node[path[-1]] = value
    return [tree[i] for i in sorted(tree)]


def _object(node: Any) -> dict[str, Any]:
    """``node`` if it is a JSON object, else an empty one (a malformed attribute reads as
    absent; what it should have given is then reported as missing)."""
    return node if isinstance(node, dict) else {}


def _listed(node: Any) -> list[Any]:
    """A dict keyed "0", "1", ... (from ``_indexed``) as a list."""
    if not isinstance(node, dict):
        return []
    return [node[k] for k in sorted((k for k in node if k.isdigit()), key=int)]


def _openinference_messages(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    out = []
    for entry in _indexed(attributes, prefix):
        message = _object(_object(entry).get("message"))
        content = message.get("content")
        if isinstance(content, dict):  # content.0, content.1, ...: one text in pieces
            content = "\n".join(str(piece) for piece in _listed(content) if piece)
        raw: dict[str, Any] = {"role": message.get("role"), "content": content}
        contents = [
            _object(_object(c).get("message_content")).get("text")
            for c in _listed(message.get("contents"))
        ]
        if raw["content"] is None and any(contents):
            raw["content"] = "\n".join(t for t in contents if isinstance(t, str) and t)
        raw["tool_calls"] = [
            {
                "id": _object(_object(call).get("tool_call")).get("id"),
                "function": _object(_object(_object(call).get("tool_call")).get("function")),
            }
            for call in _listed(message.get("tool_calls"))
        ]
        raw["tool_call_id"] = message.get("tool_call_id")
        converted = _openai_message(raw)
        if converted:
            out.append(converted)
    return out


def _openllmetry_messages(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    out = []
    for entry in _indexed(attributes, prefix):
        content = entry.get("content")
        if isinstance(content, str) and len(content) > 1 and content[0] == content[-1] == '"':
            # OpenLLMetry's LangChain instrumentation writes some contents JSON-encoded (an
            # empty answer beside a tool call is the two characters ``""``).
            decoded = parse_json(content)
            if isinstance(decoded, str):
                entry["content"] = decoded
        entry["tool_calls"] = [
            {
                "id": c.get("id"),
                "function": {"name": c.get("name"), "arguments": c.get("arguments")},
            }
            for c in _listed(entry.get("tool_calls"))
        ]
        converted = _openai_message(entry, "assistant" if prefix.endswith("completion") else None)
        if converted:
            out.append(converted)
    return out


def _event_body(event: SpanEvent) -> dict[str, Any]:
    body = event.attributes.get("body") or event.attributes.get("event.body")
    decoded = parse_json(body)
    return decoded if isinstance(decoded, dict) else dict(event.attributes)


def _event_messages(events: tuple[SpanEvent, ...]) -> dict[str, Any]:
    """The messages the span's events carry, as semconv attributes."""
    found: dict[str, Any] = {}
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for event in events:
        if event.name == "gen_ai.client.inference.operation.details":
            for key in (INPUT_MESSAGES, OUTPUT_MESSAGES, SYSTEM_INSTRUCTIONS):
                if key in event.attributes:
                    found.setdefault(key, event.attributes[key])
        elif event.name in _MESSAGE_EVENTS:
            message = _openai_message(_event_body(event), _MESSAGE_EVENTS[event.name])
            if message:
                inputs.append(message)
        elif event.name == "gen_ai.choice":
            body = _event_body(event)
            raw = parse_json(body.get("message")) if "message" in body else body
            message = _openai_message(raw if isinstance(raw, dict) else {}, "assistant")
            if message:
                outputs.append(message)
        elif event.name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
            key = "gen_ai.prompt" if event.name.endswith("prompt") else "gen_ai.completion"
            listed = parse_json(event.attributes.get(key))
            target = inputs if key == "gen_ai.prompt" else outputs
            for raw in listed if isinstance(listed, list) else []:
                if isinstance(raw, dict) and (message := _openai_message(raw, "assistant")):
                    target.append(message)
    if inputs:
        found.setdefault(INPUT_MESSAGES, inputs)
    if outputs:
        found.setdefault(OUTPUT_MESSAGES, outputs)
    return found


def _value_text(value: Any) -> str | None:
    """The text of an ``input.value`` / ``output.value``: the text itself, or the last message
    of a JSON chat state (LangGraph's ``{"messages": [...]}``)."""
    decoded = parse_json(value) if isinstance(value, str) else value
    if decoded is None:
        return value if isinstance(value, str) and value.strip() else None
    if isinstance(decoded, dict) and isinstance(decoded.get("messages"), list):
        for message in reversed(decoded["messages"]):
            if isinstance(message, dict):
                kwargs = message.get("kwargs")
                inner: dict[str, Any] = kwargs if isinstance(kwargs, dict) else message
                if isinstance(inner.get("content"), str):
                    return str(inner["content"])
    if isinstance(decoded, str):
        return decoded
    return None


def _agent_io(attributes: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    user = _value_text(attributes.get("input.value"))
    if user:
        found[INPUT_MESSAGES] = [{"role": "user", "parts": [_text_part(user)]}]
    answer = _value_text(attributes.get("output.value"))
    final = attributes.get("final_result")  # Pydantic AI
    if answer is None and isinstance(final, str) and final:
        answer = final
    if answer:
        found[OUTPUT_MESSAGES] = [{"role": "assistant", "parts": [_text_part(answer)]}]
    return found


def _openinference(span: Span, kind: str, is_root: bool, has_agents: bool) -> dict[str, Any]:
    attributes = span.attributes
    operation = _OPENINFERENCE_OPERATIONS.get(kind)
    if kind == "CHAIN" and is_root:
        # A chain at the top is the agent (LangGraph's graph), or, with agent spans below it
        # (the OpenAI Agents SDK's trace), the workflow that ran them.
        operation = "invoke_workflow" if has_agents else "invoke_agent"
    if (
        operation == "execute_tool"
        and not attributes.get("tool.name")
        and _HANDOFF.match(span.name)
    ):
        # The OpenAI Agents SDK's handoff, which OpenInference writes as a TOOL span with the
        # agents it moves between: a handoff, not a tool the model called.
        return {OPERATION: HANDOFF}
    if operation is None:
        return {}
    found: dict[str, Any] = {OPERATION: operation}
    if operation == "invoke_agent":
        found["gen_ai.agent.name"] = attributes.get("agent.name") or span.name
        # An agent that records its model's messages itself (the Claude Agent SDK's query):
        # they are the turn, every text and call, not only the final answer in output.value.
        outputs = _openinference_messages(attributes, "llm.output_messages")
        if outputs:
            found[OUTPUT_MESSAGES] = outputs
    elif operation == "chat":
        inputs = _openinference_messages(attributes, "llm.input_messages")
        system = [m for m in inputs if m["role"] == "system"]
        if system:
            found[SYSTEM_INSTRUCTIONS] = [p for m in system for p in m["parts"]]
        found[INPUT_MESSAGES] = [m for m in inputs if m["role"] != "system"]
        found[OUTPUT_MESSAGES] = _openinference_messages(attributes, "llm.output_messages")
    else:
        found["gen_ai.tool.name"] = attributes.get("tool.name") or span.name
        call_id = attributes.get("tool_call.id") or attributes.get("tool.id")
        if call_id:
            found["gen_ai.tool.call.id"] = call_id
        if "input.value" in attributes:
            found["gen_ai.tool.call.arguments"] = attributes["input.value"]
        if "output.value" in attributes:
            found["gen_ai.tool.call.result"] = attributes["output.value"]
    return found


#: OpenLLMetry's ``llm.request.type`` of a model call.
_OPENLLMETRY_LLM = ("chat", "completion")


def _traceloop_kind(attributes: dict[str, Any]) -> str:
    """Traceloop's span kind, or ioa_observe's (agntcy's SDK on top of it)."""
    return str(
        attributes.get("traceloop.span.kind") or attributes.get("ioa_observe.span.kind") or ""
    )


def _traceloop_tool(span: Span) -> dict[str, Any]:
    """A Traceloop (or ioa_observe) tool span as GenAI's ``execute_tool``: its entity's name,
    input and output are the tool's name, arguments and result."""
    attributes = span.attributes
    prefix = "traceloop" if "traceloop.span.kind" in attributes else "ioa_observe"
    name = attributes.get(f"{prefix}.entity.name") or span.name.removesuffix(".tool")
    found: dict[str, Any] = {OPERATION: "execute_tool", "gen_ai.tool.name": name}
    arguments = _entity_arguments(attributes.get(f"{prefix}.entity.input"))
    if arguments is not None:
        found["gen_ai.tool.call.arguments"] = arguments
    result = _entity_result(attributes.get(f"{prefix}.entity.output"))
    if result is not None:
        found["gen_ai.tool.call.result"] = result
    return found


#: The longest tool input read as a Python literal (``ast.literal_eval`` compiles it first).
_LITERAL_LIMIT = 100_000


def _entity_arguments(raw: Any) -> Any:
    """A tool's arguments from its entity input: LangChain's ``{"input_str": "{'q': 1}"}`` (a
    Python literal, read as one), a decorated function's ``{"args": [], "kwargs": {...}}``."""
    decoded = parse_json(raw) if isinstance(raw, str) else raw
    if not isinstance(decoded, dict):
        return None
    if isinstance(decoded.get("kwargs"), dict) and decoded.get("args") in ([], None):
        return decoded["kwargs"]
    given = decoded.get("input_str")
    if isinstance(given, str) and len(given) > _LITERAL_LIMIT:
        return given  # kept as written: parsing Python is not worth its cost at this size
    if isinstance(given, str):
        try:
            literal = ast.literal_eval(given)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return given
        return literal if isinstance(literal, dict) else given
    return None


def _entity_result(raw: Any) -> Any:
    """A tool's result from its entity output: a LangChain ToolMessage's content, else the
    output as it is."""
    decoded = parse_json(raw) if isinstance(raw, str) else raw
    if decoded is None:
        return raw if isinstance(raw, str) and raw else None
    output = decoded.get("output", decoded) if isinstance(decoded, dict) else decoded
    if isinstance(output, dict) and isinstance(output.get("kwargs"), dict):
        content = output["kwargs"].get("content")
        return content if content is not None else output
    return output


def normalize(span: Span, *, is_root: bool = False, has_agents: bool = False) -> Span:
    """The span with its dialect's attributes added as GenAI semantic-convention ones.

    ``is_root``: the span has no parent in its trace (a top-level chain is then the agent, or
    with ``has_agents``, OpenInference agent spans in the trace, the workflow).
    """
    attributes = span.attributes
    added: dict[str, Any] = {}
    legacy = _LEGACY_ADK.match(span.name)
    kind = _kind(span)
    if legacy and OPERATION not in attributes:
        # Before the OpenInference kind: VeADK marks ADK's invocation a CHAIN, not an agent.
        if legacy.group(1) == "agent_run":
            added[OPERATION] = "invoke_agent"
            added["gen_ai.agent.name"] = legacy.group(2)
        else:
            added[OPERATION] = "invocation"
    elif attributes.get("traceloop.span.kind") == "workflow" and OPERATION not in attributes:
        added[OPERATION] = "invoke_workflow"
    elif _traceloop_kind(attributes) == "tool" and OPERATION not in attributes:
        added.update(_traceloop_tool(span))
    elif attributes.get("llm.request.type") in _OPENLLMETRY_LLM and OPERATION not in attributes:
        # OpenLLMetry's model call (``ChatOpenAI.chat``, ``openai.chat``): its messages are
        # the gen_ai.prompt / gen_ai.completion attributes read below.
        added[OPERATION] = "chat"
    elif kind and OPERATION not in attributes:
        added.update(_openinference(span, kind, is_root, has_agents))
    if attributes.get(OPERATION, added.get(OPERATION)) == "invoke_agent":
        # Whatever the dialect, an agent span's own input and output are its messages.
        for key, value in _agent_io(attributes).items():
            added.setdefault(key, value)
    added.update({k: v for k, v in _event_messages(span.events).items() if k not in added})
    for prefix, key in (("gen_ai.prompt", INPUT_MESSAGES), ("gen_ai.completion", OUTPUT_MESSAGES)):
        if key not in attributes and key not in added and f"{prefix}.0.role" in attributes:
            added[key] = _openllmetry_messages(attributes, prefix)
    # Messages stay decoded lists: the reader takes an attribute's JSON as text or decoded.
    fresh = {k: v for k, v in added.items() if k not in attributes}
    if not fresh:
        return span
    return dataclasses.replace(span, attributes={**attributes, **fresh})


def normalize_trace(spans: list[Span]) -> list[Span]:
    """Every span of one trace normalized; a span whose parent is not in the trace is a root."""
    ids = {s.span_id for s in spans}
    has_agents = _agents_hold_every_llm(spans)
    return [
        normalize(s, is_root=not s.parent_id or s.parent_id not in ids, has_agents=has_agents)
        for s in spans
    ]


def _kind(span: Span) -> str:
    return str(span.attributes.get(OPENINFERENCE_KIND) or "").upper()


def _agents_hold_every_llm(spans: list[Span]) -> bool:
    """Every OpenInference LLM span of the trace is below an AGENT span (there is one at least):
    the agents, not the chain at the top, are who spoke."""
    llm = [s for s in spans if _kind(s) == "LLM"]
    if not llm:
        return False
    tree = SpanTree(spans)
    return all(any(_kind(a) == "AGENT" for a in tree.ancestors(s)) for s in llm)


def handoff_target(span: Span) -> str | None:
    """The agent a handoff span hands to: OpenInference's ``output.value``, else its name."""
    target = span.attributes.get("output.value")
    if isinstance(target, str) and target:
        return target
    named = _HANDOFF.match(span.name)
    return named["target"] if named else None
