"""Cases run in several processes: ``run --agent --agent-processes N`` (``auto`` by default).

A case's time is mostly google-adk's and google-genai's Python (building requests, reading
answers, events and sessions): one process runs it on one core, however many cases wait on the
model at once. Here N-1 worker processes each load the agent from its spec, as ``run --agent``
loads it, and run the cases they are handed, many at once, beside this process, which runs
cases too (from the start: a worker joins once it has loaded the agent). This process keeps
what is shared: the one limit of cases at once (a 429 in any process cuts it for all), the
journal, the progress line and the report. What a worker's case needs (the case, its tool
mocks) is sent with it, and what it gives back (its session, spans, tool calls, why it failed)
is what a case run here gives.

Messages are pickled, each after its length, over the worker's stdin and a copy of its stdout
taken before the agent loads; the worker's own stdout then goes to stderr, so an agent that
prints writes to the terminal, not into the channel. A worker ends when its stdin closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import pickle
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from .._adaptive import AUTO
from ..formats import adk
from .loading import AgentLoadError
from .model_quota import CaseQuota
from .running import CaseExecutor, CaseRun, CaseSettings
from .tool_mocks import ToolMocks

#: ``--agent-processes auto``: a process per this many case runs, up to the cores there are
#: and ``MAX_AUTO_PROCESSES``; fewer runs than two processes' worth run in this one alone (a
#: worker costs a second or two of a core to start, which a short run does not earn back).
#: Four at most: each holds the agent and google-adk (a hundred MB or more), and a few keep
#: a model quota busy; a number asks for more.
RUNS_PER_PROCESS = 25
MAX_AUTO_PROCESSES = 4
#: How long a worker has to end once its stdin closes before it is killed.
_CLOSE_SECONDS = 5.0

_HEADER = struct.Struct(">Q")
_logger = logging.getLogger("platform_eval.agents")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def process_count(choice: int | str, runs: int) -> int:
    """Processes for ``runs`` case runs, this one among them: the number chosen, or for
    ``auto`` one per ``RUNS_PER_PROCESS`` runs up to the cores there are (1: this one alone)."""
    if choice != AUTO:
        return max(1, int(choice))
    return max(1, min(usable_cores(), MAX_AUTO_PROCESSES, runs // RUNS_PER_PROCESS))


def frame(message: Any) -> bytes:
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(payload)) + payload


def read_frame(stream: IO[bytes]) -> Any:
    """The next message from a blocking stream; EOFError at its end."""
    header = _read_exactly(stream, _HEADER.size)
    return pickle.loads(_read_exactly(stream, _HEADER.unpack(header)[0]))


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the channel closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _logging_levels() -> dict[str, int]:
    """The levels this process set on the loggers a worker's agent writes to."""
    names = ("", "platform_eval", "google_adk", "google_adk.google.adk.evaluation")
    return {name: logging.getLogger(name or None).level for name in names}


@dataclass
class _Pending:
    case: adk.EvalCase
    run: int
    quota: CaseQuota
    on_turn: Callable[[], None]
    answer: asyncio.Future[tuple[CaseRun, str | None]]


class _Worker:
    """One worker process and the case runs it has been handed."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.pending: dict[int, _Pending] = {}
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        #: Why the worker can take no more cases (it exited), None while it can.
        self.gone: str | None = None
        self._next = 0
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def spawn(cls, settings: dict[str, Any]) -> _Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "platform_eval.agents._worker",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        worker = cls(process)
        await worker._send(("start", settings))
        return worker

    async def _send(self, message: Any) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(frame(message))
        await stdin.drain()

    async def execute(
        self,
        case: adk.EvalCase,
        run: int,
        quota: CaseQuota,
        mocks: ToolMocks | None,
        on_turn: Callable[[], None],
    ) -> tuple[CaseRun, str | None]:
        ident = self._next
        self._next += 1
        answer: asyncio.Future[tuple[CaseRun, str | None]] = (
            asyncio.get_running_loop().create_future()
        )
        self.pending[ident] = _Pending(case, run, quota, on_turn, answer)
        # A worker gone cannot be written to: its reader answers every case it held.
        with contextlib.suppress(ConnectionError, OSError):
            await self._send(("run", ident, case, run, mocks))
        try:
            return await answer
        finally:
            self.pending.pop(ident, None)

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                header = await stdout.readexactly(_HEADER.size)
                payload = await stdout.readexactly(_HEADER.unpack(header)[0])
                self._take(pickle.loads(payload))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        code = await self.process.wait()
        self.gone = f"the worker process running the agent stopped (exit code {code})"
        if not self.ready.done():
            self.ready.set_exception(AgentLoadError(self.gone))
        for pending in list(self.pending.values()):
            if not pending.answer.done():
                failed = CaseRun(pending.case.eval_id, pending.run, error=self.gone)
                pending.answer.set_result((failed, None))

    def _take(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "ready":
            self.ready.set_result(None)
            return
        if kind == "failed":
            self.ready.set_exception(AgentLoadError(message[1]))
            return
        pending = self.pending.get(message[1])
        if pending is None:
            return  # a case given up on (the run stopped): its news changes nothing
        if kind == "turn":
            pending.on_turn()
        elif kind == "refused":
            pending.quota.place.refused_now(message[2])
        elif kind == "done":
            _, _, result, stops, refused, slowest = message
            pending.quota.refused, pending.quota.slowest = refused, slowest
            if not pending.answer.done():
                pending.answer.set_result((result, stops))

    async def close(self) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), _CLOSE_SECONDS)
        except TimeoutError:
            pass
        finally:
            # Also when this task is cancelled (Ctrl-C): no worker outlives the run.
            if self.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
            await asyncio.gather(self._reader, return_exceptions=True)


class WorkerPool:
    """``workers`` worker processes running one agent's cases beside this process (see the
    module), started before this process loads the agent, so that both load it at once."""

    def __init__(self, spec: str, workers: int, settings: CaseSettings | None = None) -> None:
        #: What every case shares: the runs that use this pool must run theirs with the same.
        self.settings = settings or CaseSettings()
        self._local_cases = 0
        self._wanted = workers
        self._settings: dict[str, Any] = {
            "spec": spec,
            "cases": self.settings,
            "sys_path": list(sys.path),
            "logging": _logging_levels(),
        }
        self._workers: list[_Worker] = []
        self._watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Starts the workers; cases run here until each has loaded the agent. One that cannot
        is said once (a warning) and takes no case."""
        for _ in range(self._wanted):
            self._workers.append(await _Worker.spawn(self._settings))
        self._watch = asyncio.ensure_future(self._watch_starts(list(self._workers)))

    @staticmethod
    async def _watch_starts(workers: list[_Worker]) -> None:
        for outcome in await asyncio.gather(*(w.ready for w in workers), return_exceptions=True):
            if isinstance(outcome, Exception):
                _logger.warning(
                    "a worker process could not load the agent (%s): the cases run in the "
                    "other processes",
                    outcome,
                )
                return

    def executor(self, local: CaseExecutor | None) -> CaseExecutor:
        """Runs each case where the fewest are under way: a worker that has loaded the agent,
        or ``local`` here (``running.execute_case`` with this process's agent; None: the
        workers alone). This process also serves the run: a tie goes to the worker."""
        return functools.partial(self._execute, local)

    async def _execute(
        self,
        local: CaseExecutor | None,
        case: adk.EvalCase,
        run: int,
        quota: CaseQuota,
        mocks: ToolMocks | None,
        on_turn: Callable[[], None],
    ) -> tuple[CaseRun, str | None]:
        ready = [
            w
            for w in self._workers
            if w.gone is None and w.ready.done() and not w.ready.exception()
        ]
        worker = min(ready, key=lambda w: len(w.pending), default=None)
        if local is None:
            if worker is None:
                return CaseRun(case.eval_id, run, error="no worker process has the agent"), None
            return await worker.execute(case, run, quota, mocks, on_turn)
        if worker is not None and len(worker.pending) <= self._local_cases:
            return await worker.execute(case, run, quota, mocks, on_turn)
        self._local_cases += 1
        try:
            return await local(case, run, quota, mocks, on_turn)
        finally:
            self._local_cases -= 1

    async def close(self) -> None:
        """Ends every worker: each is told to finish (its stdin closes), then killed if it
        has not within a few seconds."""
        workers, self._workers = self._workers, []
        await asyncio.gather(*(worker.close() for worker in workers), return_exceptions=True)
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
