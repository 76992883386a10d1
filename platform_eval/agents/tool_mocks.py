"""Tools answered instead of run: ``run --agent --mock-tools golden|FILE|sessions:DIR``.

An eval run of an agent that books flights should not book flights, and a run whose tools read
live data is not reproducible. With mocks, each tool call the agent makes is answered, and the
tool does not run:

* ``golden``: from the case's own expected tool responses (``intermediate_data.tool_responses``,
  or the function responses of its recorded invocation events), matched by tool name and
  arguments (with the trajectory metric's ``args_match`` rules when the config has them);
* ``FILE``: from per-tool responses in a YAML or JSON file (``mock_sources``);
* ``sessions:DIR``: from the tool responses of recorded runs (``mock_sources``).

A call no mock answers fails its case, naming the tool and the arguments (NOT_EVALUATED),
unless its tool is one of ``real_tools`` or ``unmatched="real"``.

Built on google-adk's ``before_tool_callback`` (a plugin): it sees every tool the runner calls,
function tools, ``AgentTool`` and MCP toolsets alike.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PlatformEvalError
from ..formats import adk
from ..metrics.arguments import ArgRules
from .mock_sources import (
    SESSIONS_PREFIX,
    MockFile,
    RecordedCall,
    RecordedSessions,
    describe_args,
    pair_calls,
    read_mock_file,
    read_sessions,
)

GOLDEN = "golden"
#: What ``--mock-tools`` takes (a file's path is any other value).
MODES = (GOLDEN, "FILE", f"{SESSIONS_PREFIX}DIR")
#: What a call no mock answers does: fail its case, or run the real tool.
UNMATCHED = ("error", "real")


def check_options(mode: str | None, unmatched: str) -> None:
    """ValueError (FormatError for a mock file) naming a mode or an ``unmatched`` choice that
    is not one, before any run: a mock file is read and checked here."""
    if _check_choice(mode, unmatched) == "file":
        assert mode is not None
        read_mock_file(mode)


def _check_choice(mode: str | None, unmatched: str) -> str:
    """What ``mode`` names (``""`` for none, golden, sessions or file); ValueError for a choice
    that is not one. A mock file is not read here."""
    if unmatched not in UNMATCHED:
        raise ValueError(
            f"unknown unmatched_tools {unmatched!r}; expected one of {', '.join(UNMATCHED)}"
        )
    if mode is None:
        return ""
    if mode == GOLDEN:
        return GOLDEN
    if mode.startswith(SESSIONS_PREFIX):
        folder = Path(mode[len(SESSIONS_PREFIX) :])
        if not folder.is_dir():
            raise ValueError(f"mock_tools {mode!r}: {folder} is not a folder of recorded sessions")
        return "sessions"
    if not Path(mode).is_file():
        raise ValueError(
            f"mock_tools {mode!r} is neither {GOLDEN!r}, a mock file (YAML or JSON) nor "
            f"{SESSIONS_PREFIX}DIR"
        )
    return "file"


class UnmockedToolCallError(PlatformEvalError):
    """A tool call no mock answers, where the real tool may not run."""


def golden_calls(case: adk.EvalCase) -> list[RecordedCall]:
    """The case's expected tool calls that have a response, in order: a call and its response
    pair by id where both have one, else the k-th call of a tool with its k-th response."""
    found: list[RecordedCall] = []
    for invocation in case.conversation or []:
        found += pair_calls(*_calls_and_responses(invocation))
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
    """One case run's mocked answers, and what the agent's calls got."""

    calls: list[RecordedCall]
    rules: ArgRules | None = None
    real_tools: frozenset[str] = frozenset()
    #: "error": a call no mock answers fails the case; "real": the tool runs.
    unmatched: str = "error"
    #: Answers by tool from a mock file, tried before ``calls``.
    file: MockFile | None = None
    #: What an unanswered call's error says of where the answers come from.
    unanswered: str = f"the case has no golden response for it (--mock-tools {GOLDEN})"
    used: set[int] = field(default_factory=set)
    #: Each call in order: (tool, its arguments as JSON, "mocked" or "real").
    log: list[tuple[str, str, str]] = field(default_factory=list)

    def answer(self, name: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The mocked response for this call, or None where the real tool is to run."""
        if name in self.real_tools:
            self._ran(name, args)
            return None
        response = self.file.answer(name, args) if self.file is not None else None
        if response is None:
            matching = [
                i for i, c in enumerate(self.calls) if c.name == name and self._same(c, args)
            ]
            if matching:
                # A call not answered yet first; a repeated call gets the answer again.
                index = next((i for i in matching if i not in self.used), matching[-1])
                self.used.add(index)
                response = self.calls[index].response
        if response is not None:
            self.log.append((name, describe_args(args), "mocked"))
            return response
        if self.unmatched == "real":
            self._ran(name, args)
            return None
        raise UnmockedToolCallError(
            f"the agent called {name}({describe_args(args)}) and {self.unanswered}; "
            f"--real-tools {name} lets it run"
        )

    def _ran(self, name: str, args: dict[str, Any]) -> None:
        self.log.append((name, describe_args(args), "real"))

    def _same(self, recorded: RecordedCall, args: dict[str, Any]) -> bool:
        if self.rules is None:
            return recorded.args == args
        return self.rules.compare(recorded.name, args, recorded.args) is None


@dataclass(frozen=True)
class MockPlan:
    """What ``--mock-tools`` gives each case, read once for the whole run."""

    mode: str
    rules: ArgRules | None
    real_tools: frozenset[str]
    unmatched: str
    file: MockFile | None = None
    sessions: RecordedSessions | None = None

    def for_case(self, case: adk.EvalCase) -> ToolMocks:
        """A fresh set of mocks for one run of ``case``."""
        common: dict[str, Any] = {
            "rules": self.rules,
            "real_tools": self.real_tools,
            "unmatched": self.unmatched,
        }
        if self.file is not None:
            unanswered = f"{self.file.path} has no response for it"
            return ToolMocks([], file=self.file, unanswered=unanswered, **common)
        if self.sessions is not None:
            return ToolMocks(
                self.sessions.calls_for(case.eval_id),
                unanswered=f"no recorded run in {self.sessions.folder} has a response for it",
                **common,
            )
        return ToolMocks(golden_calls(case), **common)

    @property
    def fingerprint(self) -> list[Any]:
        """What a resumed run must share with this one: a changed mock file or session folder
        is another run."""
        digest = self.file.digest if self.file else self.sessions.digest if self.sessions else ""
        return [self.mode, digest, sorted(self.real_tools), self.unmatched]


def plan_mocks(
    mode: str | None,
    cases: Sequence[adk.EvalCase],
    *,
    rules: ArgRules | None = None,
    real_tools: Iterable[str] = (),
    unmatched: str = "error",
) -> MockPlan | None:
    """The mocks ``mode`` gives the run (None: the tools run): a file or session folder is read
    here, once."""
    kind = _check_choice(mode, unmatched)
    if mode is None:
        return None
    common: dict[str, Any] = {
        "mode": mode,
        "rules": rules,
        "real_tools": frozenset(real_tools),
        "unmatched": unmatched,
    }
    if kind == GOLDEN:
        return MockPlan(**common)
    if kind == "sessions":
        return MockPlan(**common, sessions=read_sessions(mode[len(SESSIONS_PREFIX) :], cases))
    return MockPlan(**common, file=read_mock_file(mode))


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
