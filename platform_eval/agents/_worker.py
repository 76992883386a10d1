"""A worker process of ``agents.workers``: ``python -m platform_eval.agents._worker``.

It loads the agent its first message names and runs each case it is handed, many at once, as
``run --agent`` runs them in one process (``running.execute_case``); it says when a case's
turn ends, when a model call is answered 429 or 503 (the limit of cases at once is held by the
process that started it), and what each case gave. It ends when its stdin closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import signal
import sys
import threading
import warnings
from typing import IO, Any

from .._gc import own_process, settle_for_cases
from . import load_agent
from .connection import run_deadline
from .loading import AgentLoadError
from .model_quota import CaseQuota
from .reports import CaseRun
from .running import CaseContext, execute_case
from .workers import frame, read_frame


class _Messenger:
    """A case's place among the cases at once, as this worker holds it: a refusal is sent to
    the process that holds the limit."""

    def __init__(self, send: Any, ident: int) -> None:
        self._send = send
        self._ident = ident

    def refused_now(self, retry_after: float | None = None) -> None:
        self._send(("refused", self._ident, retry_after))


#: What google-adk imports on a case's first run (measured on google-adk 2.13: 760 modules, 0.7 s
#: of the first case), imported before the first message: a worker ``_standby`` started does
#: it while the command is still starting. A name this google-adk lacks is passed over.
_FIRST_CASE_IMPORTS = (
    "google.adk.runners",
    "google.adk.agents._agent_router",
    "google.adk.agents.remote_a2a_agent",
    "google.adk.workflow._workflow",
    "google.adk.workflow._llm_agent_wrapper",
    "google.adk.workflow._node_runner_utils",
    "google.adk.auth.auth_preprocessor",
    "google.adk.tools.google_search_tool",
    "google.adk.tools.vertex_ai_search_tool",
    "google.adk.artifacts.in_memory_artifact_service",
    "google.adk.memory.in_memory_memory_service",
    "google.adk.sessions.in_memory_session_service",
    "google.adk.evaluation.eval_config",
    "google.adk.evaluation.simulation.static_user_simulator",
)


def _import_ahead() -> None:
    with warnings.catch_warnings():
        # Said, if at all, by the process that started this one, which imports them too.
        warnings.simplefilter("ignore")
        for name in _FIRST_CASE_IMPORTS:
            # Anything an optional part of google-adk raises is met again, and said, where
            # the agent needs it.
            with contextlib.suppress(Exception):
                importlib.import_module(name)


def _settle(settings: dict[str, Any]) -> None:
    """This process as the one that started it: its import path and its log levels."""
    for entry in reversed(settings["sys_path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    levels: dict[str, int] = settings["logging"]
    logging.basicConfig(
        level=levels.get("") or logging.WARNING,
        format="platform-eval: %(levelname)s: %(message)s",
    )
    for name, level in levels.items():
        if name:
            logging.getLogger(name).setLevel(level)
    if logging.getLogger().level > logging.DEBUG:
        # As the command line: google-adk's notices that its evaluators are experimental.
        warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]", category=UserWarning)


async def _serve(settings: dict[str, Any], inbox: IO[bytes], channel: IO[bytes]) -> None:
    loop = asyncio.get_running_loop()
    messages: asyncio.Queue[Any] = asyncio.Queue()

    def read() -> None:
        # Blocking reads on a thread: a pipe on stdin is read the same way on every system.
        while True:
            try:
                message = read_frame(inbox)
            except (EOFError, OSError):
                message = None
            loop.call_soon_threadsafe(messages.put_nowait, message)
            if message is None:
                return

    threading.Thread(target=read, name="platform-eval-worker-inbox", daemon=True).start()

    def send(message: Any) -> None:
        channel.write(frame(message))
        channel.flush()

    try:
        agent = await load_agent(settings["spec"])
    except AgentLoadError as exc:
        send(("failed", str(exc)))
        return
    context = CaseContext.for_agent(agent, settings["cases"])
    settle_for_cases()
    send(("ready",))

    async def one(ident: int, case: Any, run: int, mocks: Any, left: float | None) -> None:
        quota = CaseQuota(_Messenger(send, ident))
        try:
            with run_deadline(left):  # what was left of the run's timeout when it was sent
                result, stops = await execute_case(
                    context, case, run, quota, mocks, lambda: send(("turn", ident))
                )
        except Exception as exc:  # ours, not the agent's: still an answer for the case
            result, stops = CaseRun(case.eval_id, run, error=f"{type(exc).__name__}: {exc}"), None
        send(("done", ident, result, stops, quota.refused, quota.slowest))

    running: set[asyncio.Task[None]] = set()
    while (message := await messages.get()) is not None:
        _, ident, case, run, mocks, left = message
        task = asyncio.ensure_future(one(ident, case, run, mocks, left))
        running.add(task)
        task.add_done_callback(running.discard)
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)


def main() -> int:
    own_process()
    # Ctrl-C reaches every process of the terminal's group: the process that started this one
    # decides what stops (it closes stdin, or kills it).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The channel is a copy of stdout taken now; stdout itself becomes stderr, so what the
    # agent prints cannot fall into the channel.
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    # The same for stdin: an agent that reads it (input()) finds it empty, not the messages.
    inbox = os.fdopen(os.dup(0), "rb")
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    _import_ahead()
    try:
        _, settings = read_frame(inbox)
    except EOFError:
        return 0
    _settle(settings)
    # A broken pipe: the process that started this one is gone, nobody to answer.
    with contextlib.suppress(BrokenPipeError):
        asyncio.run(_serve(settings, inbox, channel))
    # Every answer is sent: the interpreter's teardown of google-adk's modules (most of a
    # second) is time the run would wait for, with nothing left to do.
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
