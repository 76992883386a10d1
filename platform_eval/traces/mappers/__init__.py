"""One mapper per span dialect: the events of a turn, read from the spans below it.

Every dialect has first been said in the GenAI semantic conventions (``..dialects``). What
still differs is where a turn's messages are, and each mapper reads one place:

* ``adk_v1``: ADK's ``call_llm`` spans, whose ``gcp.vertex.agent.llm_request`` /
  ``llm_response`` attributes hold the model's request and answer (ADK 1.x, and 2.x in its
  schema v1);
* ``genai``: LLM spans of the conventions (``chat``, ``generate_content``) with
  ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (ADK schema v2, OpenAI Agents SDK,
  Pydantic AI, OpenInference's LLM spans, ...);
* ``transcript``: an agent span whose output messages are the whole turn, with no LLM span
  below it (the Claude Agent SDK's ``query``).

The tool spans (``execute_tool``) and the state of a turn (the calls made and answered, the
authors, the order) are shared, in ``turn``.
"""

from __future__ import annotations

from . import adk_v1, genai, transcript
from .turn import Turn, agent_input, input_user_text, register_agent, span_time

__all__ = [
    "Turn",
    "adk_v1",
    "agent_input",
    "genai",
    "input_user_text",
    "register_agent",
    "span_time",
    "transcript",
]
