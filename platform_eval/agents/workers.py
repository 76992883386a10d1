"""Cases run in several processes: ``run --agent --agent-processes N`` (``auto`` by default).

A case's time is mostly google-adk's and google-genai's Python (building requests, reading
answers, events and sessions): one process runs it on one core, however many cases wait on the
model at once. Here N-1 worker processes each load the agent from its spec, as ``run --agent``
loads it, and run the cases they are handed, many at once, beside this process, which runs
cases too. Cases go to a worker from the start (they wait in its pipe while it loads the
agent; the command starts its workers before it imports the rest of itself: ``_standby``), and
a worker that cannot load the agent gives its cases back to this process. This process keeps
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
from subprocess import Popen
from typing import IO, Any, Protocol

from .. import _standby
from ..formats import adk
from .connection import run_deadline_left
from .loading import AgentLoadError
from .model_quota import CaseQuota
from .reports import CaseRun
from .running import CaseExecutor, CaseSettings
from .tool_mocks import ToolMocks

#: How long a worker has to end once its stdin closes before it is killed.
_CLOSE_SECONDS = 5.0

_HEADER = struct.Struct(">Q")
_logger = logging.getLogger("platform_eval.agents")


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


class _Process(Protocol):
    """What the pool uses of a worker's process: asyncio's, or one ``_standby`` started."""

    stdin: asyncio.StreamWriter | None
    stdout: asyncio.StreamReader | None

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def kill(self) -> None: ...


class _Adopted:
    """A worker ``_standby`` started before this event loop ran: its pipes read and written
    through the loop, its exit waited for on a thread (no child watcher knows it)."""

    def __init__(
        self, popen: Popen[bytes], stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader
    ) -> None:
        self._popen = popen
        self.stdin: asyncio.StreamWriter | None = stdin
        self.stdout: asyncio.StreamReader | None = stdout

    @classmethod
    async def of(cls, popen: Popen[bytes]) -> _Adopted:
        assert popen.stdin is not None and popen.stdout is not None
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), popen.stdout)
        # asyncio's own subprocess writer is a StreamWriter over this protocol.
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, popen.stdin
        )
        return cls(popen, asyncio.StreamWriter(transport, protocol, None, loop), reader)

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        return await asyncio.to_thread(self._popen.wait)

    def kill(self) -> None:
        self._popen.kill()


class WorkerLoadError(Exception):
    """The worker could not load the agent, so it ran none of the cases it was handed."""


class _Worker:
    """One worker process and the case runs it has been handed."""

    def __init__(self, process: _Process) -> None:
        self.process = process
        self.pending: dict[int, _Pending] = {}
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        #: Why the worker can take no more cases (it exited), None while it can.
        self.gone: str | None = None
        self._next = 0
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def spawn(cls, settings: dict[str, Any], started: Popen[bytes] | None = None) -> _Worker:
        """A worker given ``settings``: ``started`` (by ``_standby``), or one started now, in
        a session of its own as ``_standby`` starts them (Ctrl-C is this process's to take)."""
        process: _Process
        if started is not None:
            process = await _Adopted.of(started)
        else:
            process = await asyncio.create_subprocess_exec(
                *_standby.worker_command(),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                start_new_session=os.name == "posix",
            )
        worker = cls(process)
        # A worker that has already ended (one started with the command can have failed in
        # its imports) is told nothing: its reader says it is gone, and its cases run elsewhere.
        with contextlib.suppress(ConnectionError, OSError):
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
            # With what is left of the run's timeout: the worker's calls end by it too.
            await self._send(("run", ident, case, run, mocks, run_deadline_left()))
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
            if pending.answer.done():
                continue
            if self.failed_to_load:
                pending.answer.set_exception(WorkerLoadError(self.gone))
            else:
                failed = CaseRun(pending.case.eval_id, pending.run, error=self.gone)
                pending.answer.set_result((failed, None))

    @property
    def failed_to_load(self) -> bool:
        """The worker will run no case: it could not load the agent (or stopped first)."""
        return self.ready.done() and self.ready.exception() is not None

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
        """Starts the workers (takes over those ``_standby`` started with the command). One
        that cannot load the agent is said once (a warning); the cases it held run here."""
        started = _standby.take(self._wanted)
        _logger.debug(
            "%d worker processes: %d started with the command, %d now",
            self._wanted,
            len(started),
            self._wanted - len(started),
        )
        for index in range(self._wanted):
            begun = started[index] if index < len(started) else None
            self._workers.append(await _Worker.spawn(self._settings, begun))
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
        """Runs each case where the fewest are under way: a worker (one still loading the
        agent too), or ``local`` here (``running.execute_case`` with this process's agent;
        None: the workers alone). This process also serves the run: a tie goes to the worker.
        A case handed to a worker that then cannot load the agent runs elsewhere."""
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
        # A worker still loading the agent takes cases too: they wait in its pipe, and it
        # starts them as soon as it can, as this process does with its first.
        usable = [w for w in self._workers if w.gone is None and not w.failed_to_load]
        worker = min(usable, key=lambda w: len(w.pending), default=None)
        if worker is not None and (local is None or len(worker.pending) <= self._local_cases):
            try:
                return await worker.execute(case, run, quota, mocks, on_turn)
            except WorkerLoadError:
                if local is None:
                    return await self._execute(local, case, run, quota, mocks, on_turn)
        if local is None:
            return CaseRun(case.eval_id, run, error="no worker process has the agent"), None
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
