"""Runs custom code metrics for an emulator started with ``--allow-code-metrics``: each call in
a fresh Python subprocess, isolated from the emulator (``-I``: no user site, no environment
variables of Python's, no current folder on the path), with an address-space limit and a
wall-clock deadline, its output kept apart from the user's prints.

This bounds what a mistake costs (a loop, a memory blow-up, a crash); it is not a security
sandbox against hostile code, which is why it is off unless asked for.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from ..metrics.code_metrics import read_result
from ..metrics.judges import CodeRunError

#: Seconds one call may take, and the address space it may use, unless told otherwise.
DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY_MB = 1024

#: What is kept of the user's prints (the last of them: where an error says why), and the
#: longest answer read: a metric that writes without end costs this much memory, not more.
PRINTS_KEPT = 64 * 1024
ANSWER_BYTES = 1 << 20

# The child: limits itself, reads {source, instance} on stdin, runs evaluate(instance) with its
# stdout (Python's and file descriptor 1 alike) pointed at stderr (the user's prints), and
# writes one JSON line on its own descriptor (argv[2]): nothing the user's code prints, or a
# process it starts writes, can be taken for the answer.
_CHILD = r"""
import json, os, resource, sys
try:  # Linux: what its processes leave behind becomes its own, and ends with it (_kill_tree)
    import ctypes
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
except Exception:
    pass
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
answer = os.fdopen(int(sys.argv[2]), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr
payload = json.loads(sys.stdin.read())
try:
    namespace = {"__name__": "evaluation_function"}
    exec(compile(payload["source"], "<evaluationFunction>", "exec"), namespace)
    result = {"result": namespace["evaluate"](payload["instance"])}
except BaseException as exc:
    last = str(exc).strip().splitlines()[-1:] or [""]
    result = {"error": type(exc).__name__ + (": " + last[0] if last[0] else "")}
try:
    text = json.dumps(result)
except (TypeError, ValueError):
    text = json.dumps({"error": "evaluate returned " + repr(result.get("result"))[:200]})
answer.write(text + "\n")
answer.flush()
# What the user's code started and left running (a subreaper's orphans are its own) ends
# before the child does: once it ended, they would be init's, out of _kill_tree's reach.
import signal
below, parents = {os.getpid()}, {}
for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
    try:
        with open("/proc/" + name + "/stat", "rb") as stat:
            parents[int(name)] = int(stat.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        pass
grew = True
while grew:
    grew = False
    for pid, parent in parents.items():
        if parent in below and pid not in below:
            below.add(pid)
            grew = True
for pid in below - {os.getpid()}:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
"""


def _drain(stream: Any, keep: int, tail: bool) -> bytearray:
    """Reads ``stream`` to its end, keeping at most ``keep`` bytes: its last (``tail``) or
    first. Read as it comes, so that the writer is never held up by a full pipe."""
    kept = bytearray()
    while chunk := stream.read(65536):
        if tail:
            kept += chunk
            del kept[:-keep]
        elif len(kept) < keep:
            kept += chunk[: keep - len(kept)]
    return kept


class _Reader(threading.Thread):
    def __init__(self, stream: Any, keep: int, tail: bool) -> None:
        super().__init__(daemon=True)
        self.stream, self.keep, self.tail = stream, keep, tail
        self.data = bytearray()

    def run(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.data = _drain(self.stream, self.keep, self.tail)


def _children() -> dict[int, list[int]]:
    """Each process's children, from /proc (Linux); empty where there is none."""
    found: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
                    parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
                found.setdefault(parent, []).append(int(entry.name))
    return found


def _tree(pid: int) -> set[int]:
    """``pid`` and every process below it."""
    children = _children()
    found, todo = {pid}, [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _kill_tree(pid: int) -> None:
    """The child and every process it started, new sessions and double forks included: its
    process group, then every process below it (a process that called ``setsid()`` left the
    group, not the tree; one whose parent ended was reparented to the child, a subreaper),
    stopped first so that none forks while they are found, then killed."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGSTOP)
    stopped: set[int] = set()
    for _ in range(10):  # until no new process appears below it
        found = _tree(pid) - stopped
        if not found:
            break
        for each in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(each, signal.SIGSTOP)
        stopped |= found
    for each in stopped | {pid}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(each, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class SubprocessCodeRunner:
    """A ``CodeRunner`` that runs each call in its own limited subprocess."""

    def __init__(
        self, *, timeout: float = DEFAULT_TIMEOUT, memory_mb: int = DEFAULT_MEMORY_MB
    ) -> None:
        if sys.platform == "win32":
            raise RuntimeError("running code metrics needs a POSIX system (its memory limit)")
        self.timeout = timeout
        self.memory_mb = memory_mb

    def run(self, source: str, instance: dict[str, Any]) -> tuple[float, str | None]:
        payload = json.dumps({"source": source, "instance": instance}).encode()
        read_answer, write_answer = os.pipe()
        try:
            child = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-c",
                    _CHILD,
                    str(self.memory_mb * 1024 * 1024),
                    str(write_answer),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(write_answer,),
                # A session of its own: the processes it starts are killed with it.
                start_new_session=True,
                # Only what Python needs: no credentials of the emulator's reach the user's code.
                env={"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"},
            )
        finally:
            os.close(write_answer)
        with os.fdopen(read_answer, "rb") as answer_stream:
            assert child.stdin is not None and child.stderr is not None
            answer = _Reader(answer_stream, ANSWER_BYTES, tail=False)
            prints = _Reader(child.stderr, PRINTS_KEPT, tail=True)
            answer.start()
            prints.start()
            try:
                with contextlib.suppress(BrokenPipeError):
                    child.stdin.write(payload)
                    child.stdin.close()
                child.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _kill_tree(child.pid)
                child.wait()
                raise CodeRunError(
                    f"evaluate ran longer than {self.timeout:g} s and was stopped"
                ) from None
            finally:
                # Whatever it started and left running ends with the call.
                _kill_tree(child.pid)
                with contextlib.suppress(ChildProcessError, OSError):
                    child.wait(1)
                answer.join(5)
                prints.join(5)
        return self._read(child.returncode, bytes(answer.data), bytes(prints.data))

    def _read(self, code: int, answer: bytes, prints: bytes) -> tuple[float, str | None]:
        lines = answer.decode("utf-8", "replace").strip().splitlines()
        if code != 0 or not lines:
            said = prints.decode("utf-8", "replace").strip().splitlines() or ["no output"]
            raise CodeRunError(
                f"the code metric's process ended with code {code} "
                f"(memory limit {self.memory_mb} MB): {said[-1][:300]}"
            )
        try:
            found = json.loads(lines[-1])
        except ValueError:
            raise CodeRunError("the code metric's answer could not be read") from None
        if not isinstance(found, dict):
            raise CodeRunError("the code metric's answer could not be read")
        if "error" in found:
            raise CodeRunError(str(found["error"]))
        try:
            return read_result(found.get("result"))
        except ValueError as exc:
            raise CodeRunError(str(exc)) from None
