"""Where mocked tools take their answers from, besides the eval case: a file, recorded sessions.

``--mock-tools FILE`` reads per-tool responses from a YAML or JSON file::

    get_weather:                    # a tool's name
      - args: {city: Paris}         # answers calls whose listed arguments match...
        response: {temp: 20, sky: clear}
      - args: {city: {regex: "Lon.*"}}
        response: {temp: 12}
      - response: {temp: 15}        # ...an entry without args answers any call
    book_flight:
      response: {status: booked}    # one answer for every call of the tool

Entries are tried in order; the first whose ``args`` all match answers. An argument's value is
compared as JSON (``1 == 1.0``), or by a rule of the trajectory criterion's ``args_match``:
``{regex: P}`` (the whole value matches P), ``{contains: S}`` (S within it, ignoring case) or
``{case_insensitive: S}``; arguments an entry does not list are not compared. A response that
is not an object is answered as ``{"result": value}``, as google-adk wraps a function tool's
return value.

``--mock-tools sessions:DIR`` replays the tool responses of recorded runs: every session or
trace file in DIR that platform-eval reads (ADK sessions, ``--save-sessions`` and
``--save-traces`` folders, OpenTelemetry exports). A call is answered by the recorded call of
the same tool with the same arguments, from the case's own recording first (paired as ``run
--traces`` pairs them), then from any other.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..formats import adk
from ..formats._problems import FormatError, Problem
from ..metrics._spec import MetricError
from ..metrics.arguments import Rule, parse_rule
from ..types import AgentData

#: ``--mock-tools`` takes this prefix before a folder of recorded sessions.
SESSIONS_PREFIX = "sessions:"
_ENTRY_KEYS = ("args", "response")
_RULE_KEYS = frozenset({"regex", "contains", "case_insensitive"})


@dataclass(frozen=True)
class RecordedCall:
    """A tool call with the response it got: from an eval case, a session or a mock file."""

    name: str
    args: dict[str, Any]
    response: dict[str, Any]


@dataclass(frozen=True)
class _Pattern:
    """An argument's value in a mock file: a value compared as JSON, or a rule."""

    value: Any
    rule: Rule | None = None

    def matches(self, actual: Any) -> bool:
        if self.rule is None:
            return bool(actual == self.value)
        return self.rule.matches(actual, self.value)


@dataclass(frozen=True)
class MockEntry:
    args: dict[str, _Pattern] | None
    response: dict[str, Any]

    def answers(self, args: Mapping[str, Any]) -> bool:
        if self.args is None:
            return True
        return all(name in args and p.matches(args[name]) for name, p in self.args.items())


@dataclass(frozen=True)
class MockFile:
    """A mock file's answers by tool, and the file's digest (a changed file is another run)."""

    path: str
    tools: dict[str, list[MockEntry]]
    digest: str

    def answer(self, name: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
        for entry in self.tools.get(name, ()):
            if entry.answers(args):
                return entry.response
        return None


def as_response(value: Any) -> dict[str, Any]:
    """A tool's answer as google-adk hands it to the model: an object, else ``{"result": v}``."""
    return dict(value) if isinstance(value, dict) else {"result": value}


def _pattern(raw: Any, file: str, where: str) -> _Pattern:
    if isinstance(raw, dict) and len(raw) == 1 and next(iter(raw)) in _RULE_KEYS:
        ((kind, value),) = raw.items()
        try:
            if kind == "regex":
                return _Pattern(None, parse_rule(raw, where))
            if not isinstance(value, str):
                raise MetricError(f"a {kind} rule takes a string, not {value!r}")
            return _Pattern(value, parse_rule(kind, where))
        except MetricError as exc:
            raise FormatError([Problem(file, where, str(exc).split(": ", 1)[-1])]) from None
    return _Pattern(raw)


def _entry(raw: Any, file: str, where: str) -> MockEntry:
    if not isinstance(raw, dict):
        raise FormatError(
            [Problem(file, where, f"expected an object with response (and args), not {raw!r}")]
        )
    for key in raw:
        if key not in _ENTRY_KEYS:
            close = difflib.get_close_matches(str(key), _ENTRY_KEYS, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise FormatError(
                [Problem(file, f"{where}.{key}", f"unknown field{hint}; expected args, response")]
            )
    if "response" not in raw:
        raise FormatError([Problem(file, where, "missing response: what the tool answers")])
    args = raw.get("args")
    if args is not None and not isinstance(args, dict):
        raise FormatError(
            [
                Problem(
                    file, f"{where}.args", f"expected an object of argument -> value, not {args!r}"
                )
            ]
        )
    patterns = (
        None
        if args is None
        else {str(k): _pattern(v, file, f"{where}.args.{k}") for k, v in args.items()}
    )
    return MockEntry(patterns, as_response(raw["response"]))


def read_mock_file(path: str | Path) -> MockFile:
    """A mock file's answers; FormatError naming the file and the JSON path of a problem."""
    from ..formats.load import read_data
    from ..formats.reading import read_text

    file = str(path)
    text = read_text(path)
    digest = hashlib.sha256(text.encode()).hexdigest()
    data = read_data(path, text)
    if not isinstance(data, dict) or not data:
        raise FormatError(
            [Problem(file, "$", "expected an object of tool name -> response or list of entries")]
        )
    tools: dict[str, list[MockEntry]] = {}
    for name, raw in data.items():
        where = f"$.{name}"
        if isinstance(raw, list):
            if not raw:
                raise FormatError([Problem(file, where, "an empty list answers no call")])
            tools[str(name)] = [_entry(e, file, f"{where}[{i}]") for i, e in enumerate(raw)]
        else:
            tools[str(name)] = [_entry(raw, file, where)]
    return MockFile(file, tools, digest)


def agent_data_calls(agent_data: AgentData) -> list[RecordedCall]:
    """The tool calls of a recorded run with their responses, in order: a call and its
    response pair by id where both have one, else the k-th call of a tool with its k-th
    response."""
    calls: list[Any] = []
    responses: list[Any] = []
    for turn in agent_data.turns or []:
        for event in turn.events or []:
            for part in (event.content.parts if event.content else None) or []:
                if part.function_call is not None:
                    calls.append(part.function_call)
                if part.function_response is not None:
                    responses.append(part.function_response)
    return pair_calls(calls, responses)


def pair_calls(calls: Sequence[Any], responses: Sequence[Any]) -> list[RecordedCall]:
    """Function calls paired with their responses (google-genai or ADK parts alike)."""
    by_id = {r.id: r for r in responses if r.id}
    by_name: dict[str, list[Any]] = defaultdict(list)
    for response in responses:
        if not response.id or not any(c.id == response.id for c in calls):
            by_name[response.name or ""].append(response)
    found: list[RecordedCall] = []
    for call in calls:
        response = by_id.get(call.id) if call.id else None
        if response is None and by_name[call.name or ""]:
            response = by_name[call.name or ""].pop(0)
        if response is not None:
            found.append(
                RecordedCall(call.name or "", dict(call.args or {}), as_response(response.response))
            )
    return found


@dataclass(frozen=True)
class RecordedSessions:
    """The tool calls of a folder of recorded runs, by the eval case each run is paired with."""

    folder: str
    by_case: dict[str, list[RecordedCall]]
    everywhere: list[RecordedCall]
    digest: str

    def calls_for(self, eval_id: str) -> list[RecordedCall]:
        """The case's own recorded calls first, then every other recorded call."""
        own = self.by_case.get(eval_id, [])
        return own + [c for c in self.everywhere if c not in own]


def read_sessions(folder: str | Path, cases: Sequence[adk.EvalCase]) -> RecordedSessions:
    """Every recorded run in ``folder``, paired with ``cases`` as ``run --traces`` pairs."""
    from ..traces import load_traces, trace_files
    from ..traces.matching import match_conversations

    path = Path(folder)
    if not path.is_dir():
        raise FormatError([Problem(str(folder), "$", "not a folder of recorded sessions")])
    files = trace_files([path])
    if not files:
        raise FormatError(
            [Problem(str(folder), "$", "holds no session or trace file platform-eval reads")]
        )
    # Each file's name, size and modification time: a changed folder is another run, and the
    # files are read once, by the trace readers.
    digest = hashlib.sha256()
    for file in files:
        stat = file.stat()
        digest.update(f"{file.relative_to(path)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    conversations = load_traces(files)
    calls = {c.id: agent_data_calls(c.agent_data) for c in conversations}
    by_case: dict[str, list[RecordedCall]] = defaultdict(list)
    for match in match_conversations(cases, conversations).matches:
        by_case[match.eval_id].extend(calls[match.conversation.id])
    everywhere = [call for found in calls.values() for call in found]
    if not everywhere:
        raise FormatError(
            [Problem(str(folder), "$", "its recorded runs hold no tool call with a response")]
        )
    return RecordedSessions(str(folder), dict(by_case), everywhere, digest.hexdigest())


def describe_args(args: Mapping[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
