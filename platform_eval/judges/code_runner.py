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


def _kill_group(pid: int) -> None:
    """Every process of the call's session: the child and whatever it started."""
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
                _kill_group(child.pid)
                child.wait()
                raise CodeRunError(
                    f"evaluate ran longer than {self.timeout:g} s and was stopped"
                ) from None
            finally:
                # Whatever it started and left running ends with the call.
                _kill_group(child.pid)
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
