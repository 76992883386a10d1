"""What each agent of a served app was given in each turn, as an in-process run records it
(``running``'s app details recorder: the system instruction as sent, the tool declarations), for
ADK's judged criteria to read the same app details on either route.

A server's ``app-info`` gives each agent's instruction as declared: a template, whose
placeholders ADK fills from the session state when it sends a request. The session read back
from the server holds that state as it went (the case's initial state, then each event's
``stateDelta``), so the instruction is built here as google-adk builds it, by its own request
processors (global instruction, instruction with the state injected, identity, transfer to
other agents) on a stand-in of the agent made from what ``app-info`` declares, with the state
as it was when the agent first spoke in the turn. What a stand-in cannot know (an instruction
provider function, a tool or callback that rewrites the instruction, an artifact placeholder)
leaves the declared instruction, said once.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..traces.adk_session import AGENT_CONFIG_KEY

_logger = logging.getLogger("platform_eval.agents")


def merged_tools(tools: Any) -> list[dict[str, Any]]:
    """app-info's tools (a Tool per declaration) as a request sends them: one Tool holding every
    function declaration, in order, then any other tool as it is."""
    declarations: list[Any] = []
    others: list[Any] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        found = tool.get("functionDeclarations") or tool.get("function_declarations")
        if isinstance(found, list) and len(tool) == 1:
            declarations += found
        else:
            others.append(tool)
    return ([{"functionDeclarations": declarations}] if declarations else []) + others


class StandIns:
    """google-adk agents made from an app's ``app-info`` (name, description, instruction,
    sub-agents), to build their instructions with ADK's own request processors."""

    def __init__(self, agents: Mapping[str, Mapping[str, Any]], root: str) -> None:
        from google.adk.agents.llm_agent import LlmAgent

        self.configs = agents
        self.built: dict[str, Any] = {}
        #: What ADK's request processors declared for each agent beside its own tools
        #: (``transfer_to_agent``, for an agent that can transfer), as a request holds them.
        self.added_tools: dict[str, list[dict[str, Any]]] = {}

        def build(name: str, seen: frozenset[str]) -> Any:
            config = agents.get(name) or {}
            subs = [
                build(str(sub), seen | {name})
                for sub in config.get("subAgents") or config.get("sub_agents") or []
                if str(sub) in agents and str(sub) not in seen and str(sub) not in self.built
            ]
            agent = LlmAgent(
                name=name,
                description=str(config.get("description") or ""),
                instruction=str(config.get("instruction") or ""),
                sub_agents=subs,
            )
            self.built[name] = agent
            return agent

        if root in agents:
            build(root, frozenset())

    async def instruction(
        self, name: str, state: dict[str, Any], app_name: str, user_id: str, invocation: str
    ) -> str | None:
        """The system instruction ADK sends for agent ``name`` with ``state``; None where it
        cannot be built here."""
        from google.adk.agents.invocation_context import InvocationContext
        from google.adk.flows.llm_flows import agent_transfer
        from google.adk.flows.llm_flows.prompt import _identity, _instructions
        from google.adk.models.llm_request import LlmRequest
        from google.adk.sessions.in_memory_session_service import InMemorySessionService
        from google.adk.sessions.session import Session

        agent = self.built.get(name)
        if agent is None:
            return None
        session = Session(id="rendering", app_name=app_name, user_id=user_id, state=dict(state))
        context = InvocationContext(
            session_service=InMemorySessionService(),
            invocation_id=invocation or "rendering",
            agent=agent,
            session=session,
        )
        request = LlmRequest()
        processors = [_instructions.request_processor, _identity.request_processor]
        if agent.sub_agents or agent.parent_agent is not None:
            processors.append(agent_transfer.request_processor)
        try:
            for processor in processors:
                async for _ in processor.run_async(context, request):
                    pass
        except Exception:  # a placeholder with no value, an artifact: ADK would fail the call
            _logger.debug("the instruction of %s cannot be built here", name, exc_info=True)
            return None
        built = request.config.system_instruction if request.config else None
        self.added_tools[name] = [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True)
            for tool in (request.config.tools if request.config else None) or []
            if hasattr(tool, "model_dump")
        ]
        return built if isinstance(built, str) else None


async def turn_details(
    stand_ins: StandIns,
    app_name: str,
    user_id: str,
    session: dict[str, Any],
    state: Mapping[str, Any],
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Writes each turn's app details into the served ``session``'s events (``AGENT_CONFIG_KEY``
    on each agent's first event of a turn, as the in-process run does); returns each agent's
    details in its first turn (``CaseRun.agents``) and the agents whose instruction could not be
    built (their declared one is kept)."""
    agents = stand_ins.configs
    events = [e for e in session.get("events") or [] if isinstance(e, dict)]
    # The details go on an agent's first event of a turn, as the in-process run puts them; the
    # state they are built with is the state when it first called its model: before its first
    # answer, after what came earlier (a before-agent callback's delta is an event of its own).
    opened: dict[tuple[str, str], dict[str, Any]] = {}
    asked: dict[tuple[str, str], dict[str, Any]] = {}
    now = dict(state)
    for event in events:
        turn = (str(event.get("invocationId") or ""), str(event.get("author") or ""))
        if turn[1] in agents:
            opened.setdefault(turn, event)
            if turn not in asked and _answers(event):
                asked[turn] = dict(now)
        actions = event.get("actions")
        delta = actions.get("stateDelta") if isinstance(actions, dict) else None
        if isinstance(delta, dict):
            now.update(delta)
    first: dict[str, dict[str, Any]] = {}
    declared: list[str] = []
    for (invocation, author), event in opened.items():
        config = dict(agents[author])
        at = asked.get((invocation, author), now)
        built = await stand_ins.instruction(author, at, app_name, user_id, invocation)
        if built is None:
            declared.append(author)
        else:
            config["instruction"] = built
        config.pop("description", None)
        config.pop("subAgents", None)
        # As a request holds them: what ADK's processors declared first (transfer_to_agent),
        # then the agent's own, in one Tool of function declarations.
        tools = stand_ins.added_tools.get(author, []) + list(config.get("tools") or [])
        if tools:
            config["tools"] = merged_tools(tools)
        event["customMetadata"] = {**(event.get("customMetadata") or {}), AGENT_CONFIG_KEY: config}
        first.setdefault(author, config)
    return first, sorted(set(declared))


def _answers(event: dict[str, Any]) -> bool:
    """An event a model call produced: content that is no tool's response."""
    content = event.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list) or not parts:
        return False
    return not any(isinstance(p, dict) and p.get("functionResponse") for p in parts)
