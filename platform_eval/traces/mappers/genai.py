"""LLM spans of the GenAI semantic conventions (``chat``, ``generate_content``,
``text_completion``) and their ``gen_ai.input.messages`` / ``gen_ai.output.messages``.

The output messages are the model's texts and calls, an event of the agent that made the call.
The input holds the whole conversation so far: it is read only for what is still missing, the
user's message or the answer to a call no tool span answered (a handoff, a tool carried out
over A2A, ADK recording tool results only in the next request).
"""

from __future__ import annotations

from .. import genai_semconv as semconv
from ..containers import Span
from ..span_tree import SpanTree
from . import adk_v1
from .turn import Turn, latest_user_text

OPERATIONS = ("generate_content", "chat", "text_completion")


def is_llm(span: Span) -> bool:
    return span.operation in OPERATIONS and not adk_v1.is_llm(span)


def is_read(span: Span, tree: SpanTree) -> bool:
    """An LLM span this mapper reads: not one inside an ADK ``call_llm`` span, which carries
    the same call with its content (ADK's schema v1 writes both, content on the outer one)."""
    return is_llm(span) and not any(adk_v1.is_llm(a) for a in tree.ancestors(span))


def read_llm(turn: Turn, span: Span) -> None:
    where = f"span {span.span_id}"
    if turn.user is None or turn.unanswered():
        inputs = semconv.messages(
            span.attributes.get(semconv.INPUT_MESSAGES), f"{where} input", turn.notes
        )
        turn.answers_in(span, inputs)
        if turn.user is None:
            turn.user = latest_user_text(reversed(inputs))
    turn.instruction(span, semconv.system_text(span.attributes.get(semconv.SYSTEM_INSTRUCTIONS)))
    turn.offered_tools(
        span, semconv.tool_definitions(span.attributes.get(semconv.TOOL_DEFINITIONS))
    )
    outputs = semconv.messages(
        span.attributes.get(semconv.OUTPUT_MESSAGES), f"{where} output", turn.notes
    )
    for content in outputs:
        turn.model_content(span, content)
