"""Tools answered from the eval case instead of run: ``run --agent --mock-tools golden``.

An eval run of an agent that books flights should not book flights, and a run whose tools read
live data is not reproducible. With golden mocks, each tool call the agent makes is answered
from the case's own expected tool responses (``intermediate_data.tool_responses``, or the
function responses of its recorded invocation events), matched by tool name and arguments
(with the trajectory metric's ``args_match`` rules when the config has them). The tool itself
does not run. A call no golden response answers fails its case, naming the tool and the
arguments (NOT_EVALUATED), unless its tool is one of ``real_tools`` or ``unmatched="real"``.

Built on google-adk's ``before_tool_callback`` (a plugin): it sees every tool the runner calls,
function tools, ``AgentTool`` and MCP toolsets alike.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import PlatformEvalError
from ..formats import adk
from ..metrics.arguments import ArgRules

MODES = ("golden",)
#: What a call no golden response answers does: fail its case, or run the real tool.
UNMATCHED = ("error", "real")


def check_options(mode: str | None, unmatched: str) -> None:
    """ValueError naming a mode or an ``unmatched`` choice that is not one, before any run."""
    if mode is not None and mode not in MODES:
        raise ValueError(f"unknown mock_tools {mode!r}; expected one of {', '.join(MODES)}")
    if unmatched not in UNMATCHED:
        raise ValueError(
            f"unknown unmatched_tools {unmatched!r}; expected one of {', '.join(UNMATCHED)}"
        )


class UnmockedToolCallError(PlatformEvalError):
    """A tool call no golden response answers, where the real tool may not run."""


@dataclass(frozen=True)
class GoldenCall:
    name: str
    args: dict[str, Any]
    response: dict[str, Any]


def golden_calls(case: adk.EvalCase) -> list[GoldenCall]:
    """The case's expected tool calls that have a response, in order: a call and its response
    pair by id where both have one, else the k-th call of a tool with its k-th response."""
    found: list[GoldenCall] = []
    for invocation in case.conversation or []:
        calls, responses = _calls_and_responses(invocation)
        by_id = {r.id: r for r in responses if r.id}
        by_name: dict[str, list[Any]] = defaultdict(list)
        for response in responses:
            if not response.id or not any(c.id == response.id for c in calls):
                by_name[response.name or ""].append(response)
        for call in calls:
            response = by_id.get(call.id) if call.id else None
            if response is None and by_name[call.name or ""]:
                response = by_name[call.name or ""].pop(0)
            if response is not None:
                found.append(
                    GoldenCall(
                        call.name or "", dict(call.args or {}), dict(response.response or {})
                    )
                )
    return found


def _calls_and_responses(invocation: adk.Invocation) -> tuple[list[Any], list[Any]]:
    data = invocation.intermediate_data
    if isinstance(data, adk.IntermediateData):
        return list(data.tool_uses), list(data.tool_responses)
    calls, responses = [], []
    if isinstance(data, adk.InvocationEvents):
        for event in data.invocation_events:
            for part in (event.content.parts if event.content else None) or []:
                if part.function_call:
                    calls.append(part.function_call)
                if part.function_response:
                    responses.append(part.function_response)
    return calls, responses


@dataclass
class ToolMocks:
    """One case's golden answers, and what the agent's calls got."""

    calls: list[GoldenCall]
    rules: ArgRules | None = None
    real_tools: frozenset[str] = frozenset()
    #: "error": a call no golden response answers fails the case; "real": the tool runs.
    unmatched: str = "error"
    used: set[int] = field(default_factory=set)
    #: How many calls were answered from the case, and how many ran the real tool.
    mocked: int = 0
    real: int = 0

    def answer(self, name: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The golden response for this call, or None where the real tool is to run."""
        if name in self.real_tools:
            self.real += 1
            return None
        matching = [i for i, c in enumerate(self.calls) if c.name == name and self._same(c, args)]
        if matching:
            # A call not answered yet first; a repeated call gets the answer again.
            index = next((i for i in matching if i not in self.used), matching[-1])
            self.used.add(index)
            self.mocked += 1
            return self.calls[index].response
        if self.unmatched == "real":
            self.real += 1
            return None
        shown = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
        raise UnmockedToolCallError(
            f"the agent called {name}({shown}) and the case has no golden response for it "
            f"(--mock-tools golden); --real-tools {name} lets it run"
        )

    def _same(self, golden: GoldenCall, args: dict[str, Any]) -> bool:
        if self.rules is None:
            return golden.args == args
        return self.rules.compare(golden.name, args, golden.args) is None


def mocks_for(
    case: adk.EvalCase,
    mode: str | None,
    *,
    rules: ArgRules | None = None,
    real_tools: Iterable[str] = (),
    unmatched: str = "error",
) -> ToolMocks | None:
    """The mocks ``mode`` gives ``case`` (None: the tools run)."""
    check_options(mode, unmatched)
    if mode is None:
        return None
    return ToolMocks(golden_calls(case), rules, frozenset(real_tools), unmatched)


def mock_plugin(mocks: ToolMocks) -> Any:
    """The google-adk plugin that answers the runner's tool calls from ``mocks``."""
    return _plugin_class()(mocks)


@functools.cache
def _plugin_class() -> Any:
    from google.adk.plugins.base_plugin import BasePlugin

    class ToolMocker(BasePlugin):
        def __init__(self, mocks: ToolMocks) -> None:
            super().__init__(name="platform_eval_tool_mocks")
            self.mocks = mocks

        async def before_tool_callback(
            self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
        ) -> dict[str, Any] | None:
            return self.mocks.answer(tool.name, dict(tool_args or {}))

    return ToolMocker
