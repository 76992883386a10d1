"""An ADK agent tree as the API's ``AgentConfig`` map (id -> config): what scenario and rubric
generation are told about the agent (its instruction, description, tools and sub-agents)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..types import AgentConfig, Tool

if TYPE_CHECKING:
    from google.adk.agents import BaseAgent

_logger = logging.getLogger("platform_eval")


def _declarations(agent: Any) -> list[Tool]:
    """The agent's tools as function declarations, as ADK sends them to the model."""
    from google.adk.tools.function_tool import FunctionTool

    declarations = []
    for tool in getattr(agent, "tools", None) or []:
        wrapped = FunctionTool(tool) if callable(tool) and not hasattr(tool, "name") else tool
        try:
            declaration = wrapped._get_declaration()
        except Exception:  # a toolset or a tool that declares itself at run time
            _logger.debug("no declaration for %r", tool, exc_info=True)
            declaration = None
        if declaration is not None:
            declarations.append(Tool(function_declarations=[declaration]))
    return declarations


def agent_configs(root_agent: BaseAgent) -> tuple[dict[str, AgentConfig], str]:
    """(every agent of the tree by name, the root's name)."""
    found: dict[str, AgentConfig] = {}
    pending = [root_agent]
    while pending:
        agent = pending.pop(0)
        name = str(getattr(agent, "name", "") or "agent")
        if name in found:
            continue
        instruction = getattr(agent, "instruction", None)
        sub_agents = list(getattr(agent, "sub_agents", None) or [])
        found[name] = AgentConfig(
            agent_id=name,
            agent_type=type(agent).__name__,
            description=getattr(agent, "description", None) or None,
            instruction=instruction
            if isinstance(instruction, str)
            else ("(built at run time)" if instruction else None),
            tools=_declarations(agent) or None,
            sub_agents=[str(sub.name) for sub in sub_agents] or None,
        )
        pending.extend(sub_agents)
    return found, str(getattr(root_agent, "name", "") or "agent")
