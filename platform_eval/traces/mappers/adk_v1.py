"""ADK's ``call_llm`` spans (ADK 1.x, and 2.x in its schema v1).

``gcp.vertex.agent.llm_request`` holds the request: the turn's user message is the newest user
text in its ``contents``, and its ``config.system_instruction`` the agent's instruction.
``gcp.vertex.agent.llm_response`` holds the model's answer: its ``content`` (texts and calls) is
an event of the agent that made the call.
"""

from __future__ import annotations

from typing import Any

from google.genai import types as genai_types

from .. import genai_semconv as semconv
from .._content import read_content
from ..containers import Span
from .turn import Turn, latest_user_text

LLM_REQUEST = "gcp.vertex.agent.llm_request"
LLM_RESPONSE = "gcp.vertex.agent.llm_response"


def is_llm(span: Span) -> bool:
    return span.operation == "call_llm" or span.name == "call_llm"


def _user_message(request: Any) -> genai_types.Content | None:
    if not isinstance(request, dict):
        return None
    contents = request.get("contents") or []
    return latest_user_text(read_content(raw) for raw in reversed(contents))


def user_message(span: Span) -> genai_types.Content | None:
    """The newest user text of the span's request."""
    return _user_message(semconv.parse_json(span.attributes.get(LLM_REQUEST)))


def read_llm(turn: Turn, span: Span) -> None:
    # None when absent, or cut short by an attribute length limit.
    request = semconv.parse_json(span.attributes.get(LLM_REQUEST))
    if turn.user is None:
        turn.user = _user_message(request)
    if isinstance(request, dict):
        turn.instruction(span, (request.get("config") or {}).get("system_instruction"))
    response = semconv.parse_json(span.attributes.get(LLM_RESPONSE))
    content = (
        read_content(response.get("content"), f"span {span.span_id} LLM response", turn.notes)
        if isinstance(response, dict)
        else None
    )
    if content is None:
        if span.attributes.get(LLM_RESPONSE):
            turn.notes.append(f"span {span.span_id}: LLM response unreadable (truncated?)")
        return
    turn.model_content(span, content)
