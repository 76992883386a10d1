"""The ``platform-eval`` command's entry point: a command line that runs an agent in several
processes starts their workers first (``_standby``), then the command itself is imported and
run (``cli.program``). Everything else goes straight to the command.

Measured on ``run --agent`` (200 cases, benchmarks/bench_agent_runs.py): the command takes a
second to import and half a second to load the agent before its first case, and a worker
started then takes as long again before its first; started here, the worker is ready when the
command's first case starts.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from . import _standby

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
    """Worker processes this command line's agent run may use, started before the command is
    parsed: a guess the worker pool corrects (what it does not take, it kills), so it need not
    read the eval set. 0 for a command that runs no agent, and where help is asked for."""
    if not _AGENT_COMMANDS.intersection(argv) or {"-h", "--help"}.intersection(argv):
        return 0
    if _option(argv, "--agent") is None:
        return 0
    choice = (_option(argv, "--agent-processes") or "auto").strip().lower()
    if choice == "auto":
        return min(_standby.usable_cores(), _standby.MAX_AUTO_PROCESSES) - 1
    try:
        return max(0, int(choice) - 1)
    except ValueError:
        return 0  # the command says what is wrong with it


def program() -> int:
    _standby.start(workers_wanted(sys.argv[1:]))
    try:
        from .cli import program as command

        return command()
    finally:
        _standby.release()
