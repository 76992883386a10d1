"""Agent worker processes started with the command, before it imports the rest of itself.

A worker (``agents._worker``) spends a second or two importing google-adk and the modules a
case needs before it can run one; the command spends as long importing the client and the
types, reading the eval set and loading the agent. Started by ``_launcher`` as the command
begins, a worker does its imports on another core meanwhile, then waits for the worker pool
(``agents.workers``) to hand it the agent and the cases. A worker the run does not use is
killed: it holds nothing yet.

Kept light: only it and ``_adaptive`` are imported before it starts workers.
"""

from __future__ import annotations

import os
import subprocess
import sys

from ._adaptive import AUTO

#: ``--agent-processes auto``: a process per this many case runs, up to the cores there are
#: and ``MAX_AUTO_PROCESSES``; fewer runs than two processes' worth run in one process alone
#: (a worker costs a second or two of a core to start, which a short run does not earn back).
#: Four at most: each holds the agent and google-adk (a hundred MB or more), and a few keep a
#: model quota busy; a number asks for more.
RUNS_PER_PROCESS = 25
MAX_AUTO_PROCESSES = 4

_waiting: list[subprocess.Popen[bytes]] = []


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def process_count(choice: int | str, runs: int) -> int:
    """Processes for ``runs`` case runs, this one among them: the number chosen (no more than
    the runs: a process beyond them would start, load the agent and hold no case), or for
    ``auto`` one per ``RUNS_PER_PROCESS`` runs up to the cores there are (1: this one alone)."""
    if choice != AUTO:
        return max(1, min(int(choice), runs))
    return max(1, min(usable_cores(), MAX_AUTO_PROCESSES, runs // RUNS_PER_PROCESS))


def worker_command() -> list[str]:
    return [sys.executable, "-m", "platform_eval.agents._worker"]


def start(count: int) -> None:
    """Starts ``count`` workers now, each importing what a case needs until it is taken.

    POSIX only: the pool reads a worker it takes over through asyncio's pipe transports, which
    elsewhere need pipes opened for overlapped I/O. Each worker is in a session of its own: a
    Ctrl-C while it imports reaches this process, which decides what stops, and not the worker.
    """
    if os.name != "posix":
        return
    for _ in range(count):
        _waiting.append(
            subprocess.Popen(
                worker_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,
            )
        )


def take(count: int) -> list[subprocess.Popen[bytes]]:
    """Up to ``count`` started workers still running, now the caller's; the rest are killed."""
    taken: list[subprocess.Popen[bytes]] = []
    while _waiting and len(taken) < count:
        worker = _waiting.pop(0)
        if worker.poll() is None:
            taken.append(worker)
    release()
    return taken


def release() -> None:
    """Kills the workers nobody took (they hold nothing: no agent, no case)."""
    while _waiting:
        worker = _waiting.pop()
        if worker.poll() is None:
            worker.kill()
        worker.wait()
        for pipe in (worker.stdin, worker.stdout):
            if pipe is not None:
                pipe.close()
