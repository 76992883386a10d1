"""Runs custom code metrics for an emulator started with ``--allow-code-metrics``: each call in
a fresh Python subprocess, isolated from the emulator (``-I``: no user site, no environment
variables of Python's, no current folder on the path), with an address-space limit and a
wall-clock deadline, its output kept apart from the user's prints.

This bounds what a mistake costs (a loop, a memory blow-up, a crash); it is not a security
sandbox against hostile code, which is why it is off unless asked for.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from ..metrics.code_metrics import read_result
from ..metrics.judges import CodeRunError

#: Seconds one call may take, and the address space it may use, unless told otherwise.
DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY_MB = 1024

# The child: limits itself, reads {source, instance} on stdin, runs evaluate(instance) with
# stdout pointed at stderr (the user's prints), and writes one JSON line on the real stdout.
_CHILD = r"""
import json, resource, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
payload = json.loads(sys.stdin.read())
answer, sys.stdout = sys.stdout, sys.stderr
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
"""


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
        payload = json.dumps({"source": source, "instance": instance})
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-c", _CHILD, str(self.memory_mb * 1024 * 1024)],
                input=payload,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                # Only what Python needs: no credentials of the emulator's reach the user's code.
                env={"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"},
            )
        except subprocess.TimeoutExpired:
            raise CodeRunError(
                f"evaluate ran longer than {self.timeout:g} s and was stopped"
            ) from None
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise CodeRunError(
                f"the code metric's process ended with code {done.returncode} "
                f"(memory limit {self.memory_mb} MB): {tail}"
            )
        answer = json.loads(lines[-1])
        if "error" in answer:
            raise CodeRunError(str(answer["error"]))
        try:
            return read_result(answer["result"])
        except ValueError as exc:
            raise CodeRunError(str(exc)) from None
