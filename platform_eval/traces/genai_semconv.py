"""Messages in the OpenTelemetry GenAI semantic conventions -> google-genai ``Content``.

``gen_ai.input.messages`` / ``gen_ai.output.messages`` hold ``[{"role", "parts": [...]}]`` with
parts typed ``text`` (``content``), ``tool_call`` (``id``, ``name``, ``arguments``),
``tool_call_response`` (``id``, ``response`` or ``result``), ``reasoning`` and others;
``gen_ai.system_instructions`` holds the system parts alone, ``gen_ai.tool.definitions`` the
tools the model was offered. Roles map to genai's: ``assistant``
is ``model``; ``tool`` (a tool's answer) and ``user`` are ``user``; ``system`` carries no turn.

A part we cannot read is dropped with a note, never the whole message.
"""

from __future__ import annotations

import json
from typing import Any

from google.genai import types as genai_types

INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"

_ROLES = {"assistant": "model", "model": "model", "user": "user", "tool": "user"}


def parse_json(value: Any) -> Any:
    """An attribute that holds JSON, as written by exporters: a string, or already decoded."""
    if isinstance(value, dict | list):
        return value
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return None


def _as_object(value: Any) -> dict[str, Any]:
    decoded = parse_json(value) if isinstance(value, str) else value
    if isinstance(decoded, dict):
        return decoded
    return {} if decoded is None else {"result": decoded}


def _as_result(value: Any) -> dict[str, Any]:
    """A tool's answer as an object: JSON as decoded, plain text as ``{"result": text}``."""
    if isinstance(value, str) and value.strip() and parse_json(value) is None:
        return {"result": value}
    return _as_object(value)


def _part(raw: Any, where: str, notes: list[str]) -> genai_types.Part | None:
    if not isinstance(raw, dict):
        notes.append(f"{where}: a part that is not an object was dropped")
        return None
    kind = raw.get("type")
    if kind == "text" or (kind is None and isinstance(raw.get("content"), str)):
        text = raw.get("content")
        return genai_types.Part(text=text) if isinstance(text, str) else None
    if kind == "reasoning":
        text = raw.get("content")
        return genai_types.Part(text=text, thought=True) if isinstance(text, str) else None
    if kind == "tool_call":
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            notes.append(f"{where}: a tool call without a name was dropped")
            return None
        call = genai_types.FunctionCall(
            id=str(raw["id"]) if raw.get("id") else None,
            name=name,
            args=_as_object(raw.get("arguments")),
        )
        return genai_types.Part(function_call=call)
    if kind == "tool_call_response":
        result = raw.get("response", raw.get("result"))
        response = genai_types.FunctionResponse(
            id=str(raw["id"]) if raw.get("id") else None,
            name=str(raw.get("name") or ""),
            response=_as_result(result),
        )
        return genai_types.Part(function_response=response)
    notes.append(f"{where}: a part of type {kind!r} was dropped")
    return None


def messages(value: Any, where: str, notes: list[str]) -> list[genai_types.Content]:
    """The messages of one attribute or event body, in order; system messages left out."""
    decoded = parse_json(value)
    if decoded is None:
        if value:
            notes.append(f"{where}: unreadable (cut by an attribute length limit?)")
        return []
    if isinstance(decoded, dict):
        decoded = [decoded]
    if not isinstance(decoded, list):
        notes.append(f"{where}: expected a list of messages")
        return []
    out: list[genai_types.Content] = []
    for index, raw in enumerate(decoded):
        if not isinstance(raw, dict):
            notes.append(f"{where}[{index}]: a message that is not an object was dropped")
            continue
        role = _ROLES.get(str(raw.get("role") or ""))
        if role is None:
            continue
        raw_parts = raw.get("parts") or []
        if not isinstance(raw_parts, list):
            notes.append(f"{where}[{index}].parts: not a list; the message was dropped")
            continue
        parts = [
            part
            for i, p in enumerate(raw_parts)
            if (part := _part(p, f"{where}[{index}].parts[{i}]", notes)) is not None
        ]
        if parts:
            out.append(genai_types.Content(role=role, parts=parts))
    return out


def system_text(value: Any) -> str | None:
    decoded = parse_json(value)
    if isinstance(decoded, dict):
        decoded = [decoded]
    if not isinstance(decoded, list):
        return value if isinstance(value, str) and value else None
    texts = [
        p["content"] for p in decoded if isinstance(p, dict) and isinstance(p.get("content"), str)
    ]
    return "\n".join(texts) or None


def _schema_kind(parameters: dict[str, Any]) -> str:
    """``parameters`` for a google-genai Schema (its types are upper-case enum names, as ADK
    writes a declaration's ``parameters``), else ``parameters_json_schema`` (JSON Schema, what
    ADK declares Python functions with)."""
    kind = parameters.get("type")
    upper = isinstance(kind, str) and kind.isupper()
    return "parameters" if upper else "parameters_json_schema"


def tool_definitions(value: Any) -> list[genai_types.Tool] | None:
    """The tools a model request offered, from ``gen_ai.tool.definitions`` (``[{"type":
    "function", "name", "description", "parameters"}, {"type": "google_search", ...}]``), as
    google-genai's Tools: consecutive functions in one Tool, as ADK declares an agent's
    functions; None when the attribute is absent or unreadable."""
    decoded = parse_json(value)
    if not isinstance(decoded, list):
        return None
    tools: list[genai_types.Tool] = []
    functions: list[genai_types.FunctionDeclaration] = []
    for definition in decoded:
        if not isinstance(definition, dict) or not isinstance(definition.get("name"), str):
            continue
        kind = definition.get("type")
        if kind == "function":
            declared: dict[str, Any] = {"name": definition["name"]}
            if isinstance(definition.get("description"), str):
                declared["description"] = definition["description"]
            parameters = definition.get("parameters")
            if isinstance(parameters, dict):
                declared[_schema_kind(parameters)] = parameters
            try:
                functions.append(genai_types.FunctionDeclaration.model_validate(declared))
            except ValueError:
                functions.append(genai_types.FunctionDeclaration(name=definition["name"]))
            continue
        if functions:
            tools.append(genai_types.Tool(function_declarations=functions))
            functions = []
        try:
            tools.append(genai_types.Tool.model_validate({str(kind): {}}))
        except ValueError:
            continue  # a kind of tool google-genai does not know: nothing to declare
    if functions:
        tools.append(genai_types.Tool(function_declarations=functions))
    return tools or None
