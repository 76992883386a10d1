"""What an agent run produced: each run of a case (its session, or the error that stopped it),
the progress counts, and the report of them all. Kept apart from the running itself, so that
the journal, the workers and the savers read them without importing the runner."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CaseRun:
    """One run of one eval case: its session, or the error that stopped it."""

    eval_id: str
    run: int
    session: dict[str, Any] | None = None
    error: str | None = None
    #: Why the user simulator stopped (``no_message_generated`` when a recorded
    #: conversation ran out, ``stop_signal_detected`` or ``turn_limit_reached`` for a scenario).
    ending: str | None = None
    #: The OpenTelemetry spans of the run, as OTLP JSON, when they were recorded.
    spans: dict[str, Any] | None = None
    #: What each agent that called its model was given, as ADK's eval records it for its judges
    #: (AgentConfig JSON by agent name: the system instruction as sent, the tool declarations).
    agents: dict[str, dict[str, Any]] | None = None
    #: True when this run was read back from the journal of an interrupted attempt.
    resumed: bool = False
    #: With mocked tools: each tool call in order, (tool, its arguments as JSON, "mocked" or
    #: "real").
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    #: In live mode: the agent's audio of each turn, as WAV files by turn number (not kept by
    #: the journal: a resumed run has none).
    audio: dict[int, bytes] = field(default_factory=dict)
    #: Each turn's seconds by our clock, from the user's message sent to the agent's answer
    #: read whole, where the agent runs elsewhere (a server's timestamps are its own clock's,
    #: and a server that writes them decides its own latency); None: the session's times.
    turn_seconds: list[float] | None = None

    @property
    def mocked_calls(self) -> int:
        return sum(1 for *_, how in self.tool_calls if how == "mocked")

    @property
    def real_calls(self) -> int:
        return sum(1 for *_, how in self.tool_calls if how == "real")

    @property
    def key(self) -> str:
        return f"{self.eval_id}#{self.run}"


@dataclass
class AgentProgress:
    """Counts for a progress bar: runs (case x repetition) finished and failed, turns done."""

    total: int
    done: int = 0
    failed: int = 0
    turns: int = 0
    resumed: int = 0
    #: With ``auto``: cases allowed at once now (None with a fixed number).
    at_once: int | None = None


AgentProgressCallback = Callable[[AgentProgress], None]


@dataclass
class AgentRunReport:
    """Every run of every case, in eval set order."""

    runs: list[CaseRun] = field(default_factory=list)
    num_runs: int = 1

    @property
    def failed(self) -> list[CaseRun]:
        return [r for r in self.runs if r.error is not None]

    @property
    def resumed(self) -> int:
        return sum(1 for r in self.runs if r.resumed)

    def summary(self) -> str:
        done = len(self.runs) - len(self.failed)
        what = "case" if self.num_runs == 1 else "case run"
        lines = [f"agent ran {done} of {len(self.runs)} {what}s"]
        if self.resumed:
            lines[0] += f" ({self.resumed} finished by an earlier attempt, not run again)"
        mocked, real = sum(r.mocked_calls for r in self.runs), sum(r.real_calls for r in self.runs)
        if mocked or real:
            lines.append(f"tool calls: {mocked} mocked, {real} ran the real tool")
            calls = [(r.key, call) for r in self.runs for call in r.tool_calls]
            lines += [f"  {key}: {tool}({args}) {how}" for key, (tool, args, how) in calls[:20]]
            if len(calls) > 20:
                lines.append(f"  (and {len(calls) - 20} more calls)")
        # Each cause once, with the runs it stopped: a server that fails every case says so
        # in one line, not in one a case.
        by_cause: dict[str, list[str]] = {}
        for failed in self.failed:
            by_cause.setdefault(str(failed.error), []).append(failed.key)
        for cause, keys in list(by_cause.items())[:10]:
            named = ", ".join(keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")
            lines.append(f"{named}: the agent failed: {cause}")
        if len(by_cause) > 10:
            lines.append(f"(and {len(by_cause) - 10} more causes)")
        return "\n".join(lines)
