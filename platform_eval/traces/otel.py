"""OpenTelemetry spans of ADK agents -> AgentData.

Reads Jaeger JSON (``{"data": [{"traceID", "spans"}]}``), OTLP JSON (``{"resourceSpans"}``, one
object or one per line), and Grafana Tempo's ``{"batches"}`` export. Every trace is one
conversation. Within a trace, every top-level ``invoke_agent`` span is one turn:

* the user message is the last user text in the ``contents`` of the turn's first LLM request
  (``gcp.vertex.agent.llm_request``);
* each ``call_llm`` span's response (``gcp.vertex.agent.llm_response``) is an event of the agent
  that made it (the nearest ``invoke_agent`` above it): function calls and text;
* each ``execute_tool`` span is the tool's response (``gcp.vertex.agent.tool_response``); its
  call (``gen_ai.tool.name`` and ``gcp.vertex.agent.tool_call_args``) is added when no LLM
  response carried it;
* the final response is the last text the agent produced in the turn.
"""

from __future__ import annotations

import base64
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from google.genai import types as genai_types
from pydantic import ValidationError

from ..formats._problems import FormatError, Problem
from ..types import AgentConfig, AgentData, AgentEvent, ConversationTurn
from ._conversation import Conversation

LLM_REQUEST = "gcp.vertex.agent.llm_request"
LLM_RESPONSE = "gcp.vertex.agent.llm_response"
TOOL_ARGS = "gcp.vertex.agent.tool_call_args"
TOOL_RESPONSE = "gcp.vertex.agent.tool_response"


@dataclass(frozen=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    attributes: dict[str, Any]

    @property
    def operation(self) -> str:
        return str(self.attributes.get("gen_ai.operation.name") or self.name.split(" ", 1)[0])


# -- reading the three shapes -----------------------------------------------------------------


def _otlp_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_otlp_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {
            kv["key"]: _otlp_value(kv.get("value")) for kv in value["kvlistValue"].get("values", [])
        }
    return None


def _otlp_id(value: Any) -> str:
    text = str(value or "")
    if text and len(text) % 4 == 0 and not all(c in "0123456789abcdefABCDEF" for c in text):
        # Tempo and some collectors write ids base64-encoded.
        try:
            return base64.b64decode(text).hex()
        except ValueError:
            return text
    return text.lower()


def _otlp_spans(resource_spans: Iterable[Any]) -> Iterator[Span]:
    for resource in resource_spans:
        scopes = resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans") or []
        for scope in scopes:
            for raw in scope.get("spans") or []:
                yield Span(
                    trace_id=_otlp_id(raw.get("traceId")),
                    span_id=_otlp_id(raw.get("spanId")),
                    parent_id=_otlp_id(raw.get("parentSpanId")) or None,
                    name=str(raw.get("name") or ""),
                    start_ns=int(raw.get("startTimeUnixNano") or 0),
                    attributes={
                        a["key"]: _otlp_value(a.get("value")) for a in raw.get("attributes") or []
                    },
                )


def _jaeger_spans(traces: Iterable[Any]) -> Iterator[Span]:
    for trace in traces:
        for raw in trace.get("spans") or []:
            parents = [
                r.get("spanID")
                for r in raw.get("references") or []
                if r.get("refType", "CHILD_OF") == "CHILD_OF"
            ]
            yield Span(
                trace_id=str(raw.get("traceID") or trace.get("traceID")),
                span_id=str(raw.get("spanID")),
                parent_id=parents[0] if parents else None,
                name=str(raw.get("operationName") or ""),
                start_ns=int(raw.get("startTime") or 0) * 1000,
                attributes={t["key"]: t.get("value") for t in raw.get("tags") or []},
            )


def spans_from_data(data: Any, source: str | None = None) -> list[Span]:
    """Normalizes Jaeger JSON, OTLP JSON (object or list of objects) and Tempo batches."""
    if isinstance(data, list):
        return [span for entry in data for span in spans_from_data(entry, source)]
    if not isinstance(data, dict):
        raise FormatError([Problem(source, "$", "expected Jaeger or OTLP JSON traces")])
    if "resourceSpans" in data or "resource_spans" in data:
        return list(_otlp_spans(data.get("resourceSpans") or data.get("resource_spans") or []))
    if "batches" in data:
        return list(_otlp_spans(data["batches"]))
    if isinstance(data.get("data"), list):
        return list(_jaeger_spans(data["data"]))
    raise FormatError(
        [
            Problem(
                source,
                "$",
                "expected Jaeger JSON (data[].spans), OTLP JSON (resourceSpans) or Tempo (batches)",
            )
        ]
    )


# -- spans to conversations -------------------------------------------------------------------


def _json_attribute(span: Span, key: str) -> Any:
    value = span.attributes.get(key)
    if isinstance(value, dict | list):
        return value
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None  # truncated by an attribute length limit


def _content(value: Any) -> genai_types.Content | None:
    if not isinstance(value, dict):
        return None
    try:
        return genai_types.Content.model_validate(value)
    except ValidationError:
        return None


def _user_message(request: Any) -> genai_types.Content | None:
    if not isinstance(request, dict):
        return None
    for raw in reversed(request.get("contents") or []):
        content = _content(raw)
        if content and content.role == "user" and any(p.text for p in content.parts or []):
            return content
    return None


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
    return datetime.fromtimestamp(span.start_ns / 1e9, UTC) if span.start_ns else None


def _turn_events(
    tree: _Tree, turn_span: Span, agents: dict[str, AgentConfig], notes: list[str]
) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    called: set[str] = set()
    user: genai_types.Content | None = None

    def author_of(span: Span) -> str:
        for candidate in (span, *tree.ancestors(span)):
            if candidate.operation == "invoke_agent" and _agent_name(candidate):
                return str(_agent_name(candidate))
        return "agent"

    for span in tree.descendants(turn_span):
        if span.operation == "invoke_agent":
            _register_agent(agents, span)
        elif span.operation == "call_llm" or span.name == "call_llm":
            request = _json_attribute(span, LLM_REQUEST)
            if user is None:
                user = _user_message(request)
            author = author_of(span)
            instruction = (
                (request or {}).get("config", {}).get("system_instruction")
                if isinstance(request, dict)
                else None
            )
            if isinstance(instruction, str) and author in agents and not agents[author].instruction:
                agents[author].instruction = instruction
            response = _json_attribute(span, LLM_RESPONSE)
            content = _content(response.get("content")) if isinstance(response, dict) else None
            if content is None:
                if span.attributes.get(LLM_RESPONSE):
                    notes.append(f"span {span.span_id}: LLM response unreadable (truncated?)")
                continue
            for part in content.parts or []:
                if part.function_call:
                    called.add(part.function_call.id or part.function_call.name or "")
            if content.role is None:
                content.role = "model"
            events.append(AgentEvent(author=author, content=content, event_time=_time(span)))
        elif span.operation == "execute_tool":
            author = author_of(span)
            name = str(span.attributes.get("gen_ai.tool.name") or span.name.split(" ", 1)[-1])
            call_id = span.attributes.get("gen_ai.tool.call.id")
            config = agents.setdefault(author, AgentConfig(agent_id=author))
            declared = {d.name for t in config.tools or [] for d in t.function_declarations or []}
            if name not in declared:
                description = span.attributes.get("gen_ai.tool.description")
                config.tools = [
                    *(config.tools or []),
                    genai_types.Tool(
                        function_declarations=[
                            genai_types.FunctionDeclaration(
                                name=name, description=str(description) if description else None
                            )
                        ]
                    ),
                ]
            if (call_id or name) not in called and name not in called:
                args = _json_attribute(span, TOOL_ARGS)
                call = genai_types.FunctionCall(
                    id=str(call_id) if call_id else None,
                    name=name,
                    args=args if isinstance(args, dict) else {},
                )
                events.append(
                    _part_event(author, "model", genai_types.Part(function_call=call), span)
                )
                called.add(str(call_id or name))
            result = _json_attribute(span, TOOL_RESPONSE)
            if result is None and span.attributes.get(TOOL_RESPONSE):
                result = {"result": str(span.attributes[TOOL_RESPONSE])}
            if result is not None:
                response = genai_types.FunctionResponse(
                    id=str(call_id) if call_id else None,
                    name=name,
                    response=result if isinstance(result, dict) else {"result": result},
                )
                events.append(
                    _part_event(author, "user", genai_types.Part(function_response=response), span)
                )
    if user is not None:
        events.insert(0, AgentEvent(author="user", content=user, event_time=_time(turn_span)))
    else:
        notes.append(f"turn {turn_span.span_id}: no user message found in the LLM request")
    return events


def spans_to_conversations(spans: list[Span], source: str | None = None) -> list[Conversation]:
    """One conversation per trace that has at least one ``invoke_agent`` span."""
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        by_trace[span.trace_id].append(span)
    conversations = []
    for trace_id, trace_spans in by_trace.items():
        tree = _Tree(trace_spans)
        invocations = [s for s in trace_spans if s.operation == "invoke_agent"]
        top = sorted(
            (
                s
                for s in invocations
                if not any(a.operation == "invoke_agent" for a in tree.ancestors(s))
            ),
            key=lambda s: s.start_ns,
        )
        if not top:
            continue
        agents: dict[str, AgentConfig] = {}
        notes: list[str] = []
        turns: list[ConversationTurn] = []
        for turn_span in top:
            _register_agent(agents, turn_span)
            events = _turn_events(tree, turn_span, agents, notes)
            if any(e.author != "user" for e in events):
                turns.append(
                    ConversationTurn(
                        turn_index=len(turns), turn_id=turn_span.span_id, events=events
                    )
                )
        conversation_id = next(
            (
                str(s.attributes[k])
                for s in trace_spans
                for k in ("gen_ai.conversation.id", "gcp.vertex.agent.session_id")
                if s.attributes.get(k)
            ),
            trace_id,
        )
        conversations.append(
            Conversation(
                id=f"{conversation_id}/{trace_id}" if conversation_id != trace_id else trace_id,
                agent_data=AgentData(agents=agents or None, turns=turns),
                source=source,
                notes=notes,
            )
        )
    return conversations
