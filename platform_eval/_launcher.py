"""The ``platform-eval`` command's entry point: a command line that runs an agent in several
processes starts their workers first (``_standby``), then the command itself is imported and
run (``cli.program``). Everything else goes straight to the command.

Measured on ``run --agent`` (200 cases, benchmarks/bench_agent_runs.py): the command takes
1.0-1.3 s to import and 0.2-0.3 s to load the agent before its first case, and a worker started
then took 1.5-2 s more before its first; started here, it is ready when the command's first
case starts (first model calls at ~2.0 s, not ~3.1 s).

The eval set is read here only to count its cases (``_planned_runs``), with the standard
library's JSON and its ``eval_cases`` key spelled out: the format's models are what this
module must not import; the command reads and checks the file again.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

from . import _standby
from ._adaptive import AUTO
from ._gc import own_process

#: The commands that run an agent (``--agent``).
_AGENT_COMMANDS = frozenset({"run", "generate"})


def _option(argv: Sequence[str], name: str) -> str | None:
    """The last value given to ``name`` (``--name V`` or ``--name=V``), None when not given."""
    value = None
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            value = argv[index + 1]
        elif arg.startswith(name + "="):
            value = arg.partition("=")[2]
    return value


def workers_wanted(argv: Sequence[str]) -> int:
    """Worker processes this command line's agent run will use, started before the command is
    parsed: as ``--agent-processes`` and the runs planned (``_planned_runs``) give them (a
    number, no more than the runs), or as many as ``auto`` (or the number) takes for a large
    run where the runs are not known here. A guess the worker
    pool corrects (what it does not take, it kills). 0 for a command that runs no agent, and
    where help is asked for."""
    if not _AGENT_COMMANDS.intersection(argv) or {"-h", "--help"}.intersection(argv):
        return 0
    agent = _option(argv, "--agent")
    if agent is None or agent.lower().startswith(("http://", "https://")):
        return 0  # no agent, or one served elsewhere: no worker here loads it
    choice: int | str = (_option(argv, "--agent-processes") or AUTO).strip().lower()
    if choice != AUTO:
        try:
            choice = max(1, int(choice))
        except ValueError:
            return 0  # the command says what is wrong with it
    runs = _planned_runs(argv)
    return _standby.process_count(choice, _LARGE_RUN if runs is None else runs) - 1


#: Runs enough for every process ``auto`` takes, where the eval set's size is not known here.
_LARGE_RUN = 1_000_000
#: An eval set file larger than this is not read here (its cases are many; reading it would
#: delay the workers' start): ``auto`` then takes every process it can.
_READ_AT_MOST = 4 * 1024 * 1024


def _planned_runs(argv: Sequence[str]) -> int | None:
    """The case runs of the first file named on the command line that holds eval cases (an ADK
    eval set or an agents-cli dataset: ``eval_cases``) times ``--num-runs``; None when no such
    file is read here (a set name, a folder, a large file, another format)."""
    for arg in argv:
        if arg.startswith("-") or not arg.endswith(".json"):
            continue
        try:
            if os.path.getsize(arg) > _READ_AT_MOST:
                return None
            with open(arg, "rb") as file:
                document = json.load(file)
        except (OSError, ValueError, RecursionError):
            continue  # the command says what is wrong with it, if it is the eval set
        cases = (
            document.get("eval_cases", document.get("evalCases"))
            if isinstance(document, dict)
            else None
        )
        if isinstance(cases, list):
            return len(cases) * _num_runs(argv)
    return None


def _num_runs(argv: Sequence[str]) -> int:
    try:
        return max(1, int(_option(argv, "--num-runs") or 1))
    except ValueError:
        return 1


#: The shell's code for a command ended by Ctrl-C (128 + SIGINT), as the command's own.
_INTERRUPTED = 130


def program() -> int:
    own_process()  # the command's process: what it loads may be set aside for good
    _standby.start(workers_wanted(sys.argv[1:]))
    try:
        try:
            from .cli import program as command
        except KeyboardInterrupt:
            # A Ctrl-C in the second the command imports itself: nothing begun, nothing to
            # finish; one line, as a Ctrl-C once it runs gives, not the import's traceback.
            print("platform-eval: error: interrupted", file=sys.stderr)
            return _INTERRUPTED
        return command()
    finally:
        _standby.release()
