"""A continued conversation's earlier turns as the session's history.

An EvaluationDataset case in agents-cli's "N+1" shape (``agent_data`` whose turns end with a
user message) asks the agent to answer the last message of a conversation that already
happened: its earlier turns are put into the session as events, as they were said, and the
agent is run on the last message only (an ADK multi-turn eval case, by contrast, asks the agent
every user message in turn).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.genai import types as genai_types

from ..formats import adk


def history_events(invocations: Sequence[adk.Invocation], agent_name: str) -> list[Any]:
    """google-adk Events for ``invocations``, in order: each turn's user message, what the agent
    did in it, and its answer (by ``agent_name`` where the turn does not say who spoke)."""
    from google.adk.events.event import Event

    events: list[Any] = []
    for index, invocation in enumerate(invocations):
        turn = invocation.invocation_id or f"history-{index}"

        def said(author: str, content: genai_types.Content, turn: str = turn) -> None:
            events.append(Event(author=author, content=content, invocation_id=turn))

        said("user", invocation.user_content)
        steps = invocation.intermediate_data
        if isinstance(steps, adk.InvocationEvents):
            for event in steps.invocation_events:
                if event.content is not None:
                    said(event.author, event.content)
        elif isinstance(steps, adk.IntermediateData):
            if steps.tool_uses:
                parts = [genai_types.Part(function_call=call) for call in steps.tool_uses]
                said(agent_name, genai_types.Content(role="model", parts=parts))
            if steps.tool_responses:
                parts = [genai_types.Part(function_response=r) for r in steps.tool_responses]
                said(agent_name, genai_types.Content(role="user", parts=parts))
            for author, answer in steps.intermediate_responses:
                said(author, genai_types.Content(role="model", parts=list(answer)))
        if invocation.final_response is not None:
            said(agent_name, invocation.final_response)
    return events
