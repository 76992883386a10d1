"""Chaos run: uploads and runs under random faults, with SIGKILLs of the uploader and the emulator.

Rounds of ``jobs.evaluate`` (upload an eval set, start a run, wait, read results) run in a child
process against an emulator child process keeping its data in SQLite. Each round registers
random faults (statuses, drops before and after processing, delays), may SIGKILL the uploader
mid-way, may SIGKILL the emulator and restart it on the same database, and may edit the eval
set file (a golden answer changed, a case added or removed). A last round runs clean; then the
server must hold a set that matches the file exactly (every case once, with its current
content) and a finished run with one result per item.

    python tools/chaos.py --rounds 30 --cases 60 --seed 7      (nox -s chaos)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

PROJECT = "chaos-project"
FAULT_PATHS = ("evaluationItems", "evaluationSets", "evaluationRuns", ":cancel")
FAULT_KINDS: tuple[dict[str, Any], ...] = (
    {"kind": "status", "status": 503},
    {"kind": "status", "status": 500},
    {"kind": "status", "status": 429, "retryAfter": "0.05"},
    {"kind": "status_after", "status": 503},
    {"kind": "drop"},
    {"kind": "drop_after"},
    {"kind": "delay", "delay": 0.3},
)

CHILD = """
import sys
from platform_eval import Client, jobs
path, manifest = sys.argv[1], sys.argv[2]
with Client() as client:
    evaluation = jobs.evaluate(
        client, path, metrics=["exact_match"], manifest=manifest, poll_interval=0.05, timeout=120
    )
    print(len(evaluation.results), evaluation.run.name, flush=True)
"""


@dataclass
class Figures:
    rounds: int = 0
    faults_registered: int = 0
    faults_hit: int = 0
    uploader_kills: int = 0
    emulator_kills: int = 0
    uploader_failures: int = 0
    uploader_successes: int = 0
    edits: list[str] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmulatorProcess:
    def __init__(self, db: Path, port: int) -> None:
        self.db, self.port = db, port
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [sys.executable, "-m", "platform_eval.cli", "emulator", "start"]
        self.process = subprocess.Popen(
            [*command, "--port", str(self.port), "--db", str(self.db), "--log-level", "error"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/_emulator/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("the emulator did not start")

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=20)


def _eval_set(cases: dict[str, str]) -> dict[str, Any]:
    return {
        "eval_set_id": "chaos",
        "eval_cases": [
            {
                "eval_id": case_id,
                "conversation": [
                    {
                        "invocation_id": f"{case_id}-0",
                        "user_content": {"role": "user", "parts": [{"text": f"ask {case_id}"}]},
                        "final_response": {"role": "model", "parts": [{"text": answer}]},
                    }
                ],
            }
            for case_id, answer in cases.items()
        ],
    }


def _edit(rng: random.Random, cases: dict[str, str], counter: list[int]) -> str:
    choice = rng.random()
    if choice < 0.4 and cases:
        case_id = rng.choice(sorted(cases))
        cases[case_id] = f"edited answer {rng.randrange(10**6)}"
        return f"edited {case_id}"
    if choice < 0.7:
        counter[0] += 1
        case_id = f"added-{counter[0]}"
        cases[case_id] = f"answer of {case_id}"
        return f"added {case_id}"
    if len(cases) > 1:
        case_id = rng.choice(sorted(cases))
        del cases[case_id]
        return f"removed {case_id}"
    return "no edit"


def _register_faults(rng: random.Random, emulator: EmulatorProcess) -> int:
    faults: list[dict[str, Any]] = []
    registered = 0
    for _ in range(rng.randint(1, 8)):
        times = rng.randint(1, 3)
        faults.append({**rng.choice(FAULT_KINDS), "path": rng.choice(FAULT_PATHS), "times": times})
        registered += times
    httpx.post(f"{emulator.url}/_emulator/faults", json={"faults": faults}).raise_for_status()
    return registered


def _pending(emulator: EmulatorProcess) -> int:
    try:
        faults = httpx.get(f"{emulator.url}/_emulator/faults", timeout=5).json()["faults"]
    except httpx.TransportError:
        return 0
    return sum(f["times"] for f in faults)


def _uploader(path: Path, manifest: Path, emulator: EmulatorProcess) -> subprocess.Popen[str]:
    env = {**os.environ, "PLATFORM_EVAL_EMULATOR_HOST": f"127.0.0.1:{emulator.port}"}
    env["GOOGLE_CLOUD_PROJECT"] = PROJECT
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(manifest)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _verify(emulator: EmulatorProcess, cases: dict[str, str], run_name: str) -> list[str]:
    """What is wrong with the server's state; empty when it matches the file exactly."""
    from platform_eval import Client

    problems: list[str] = []
    with Client(PROJECT, api_endpoint=emulator.url) as client:
        run = client.get_run(run_name)
        assert run.data_source is not None and run.data_source.evaluation_set
        evaluation_set = client.get_set(run.data_source.evaluation_set)
        names = evaluation_set.evaluation_items or []
        items = [client.get_item(name) for name in names]
        seen: dict[str, str] = {}
        for item in items:
            case_id = str(item.display_name)
            if case_id in seen:
                problems.append(f"case {case_id} twice in the set")
            seen[case_id] = json.dumps(item.to_wire())
            if case_id not in cases:
                problems.append(f"case {case_id} is in the set but not in the file")
            elif json.dumps(cases[case_id]) not in seen[case_id]:
                problems.append(f"case {case_id} does not hold its current answer")
        for case_id in cases:
            if case_id not in seen:
                problems.append(f"case {case_id} of the file is missing from the set")
        if not run.done:
            problems.append(f"run {run.name} is {run.state}")
        else:
            results = client.get_results(run)
            requested = sorted(
                str(r.evaluation_response.evaluation_request)
                for r in results
                if r.evaluation_response
            )
            if requested != sorted(names):
                problems.append(f"{len(results)} results for {len(names)} items")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--cases", type=int, default=60)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(10**6)
    rng = random.Random(seed)
    figures = Figures()
    with tempfile.TemporaryDirectory(prefix="platform-eval-chaos-") as tmp:
        workdir = Path(tmp)
        path, manifest = workdir / "chaos.evalset.json", workdir / "manifest.jsonl"
        cases = {f"case-{i}": f"answer {i}" for i in range(args.cases)}
        counter = [0]
        emulator = EmulatorProcess(workdir / "emulator.sqlite", _free_port())
        emulator.start()
        started = time.monotonic()
        try:
            for _ in range(args.rounds):
                figures.rounds += 1
                if rng.random() < 0.3:
                    figures.edits.append(_edit(rng, cases, counter))
                path.write_text(json.dumps(_eval_set(cases)))
                registered = _register_faults(rng, emulator)
                figures.faults_registered += registered
                child = _uploader(path, manifest, emulator)
                if rng.random() < 0.4:
                    time.sleep(rng.uniform(0.05, 1.5))
                    if child.poll() is None:
                        child.send_signal(signal.SIGKILL)
                        figures.uploader_kills += 1
                if rng.random() < 0.2:
                    time.sleep(rng.uniform(0.0, 0.5))
                    figures.faults_hit += registered - _pending(emulator)
                    registered = 0
                    emulator.kill()
                    figures.emulator_kills += 1
                    emulator.start()
                child.wait(timeout=300)
                figures.faults_hit += max(registered - _pending(emulator), 0)
                httpx.delete(f"{emulator.url}/_emulator/faults").raise_for_status()
                if child.returncode == 0:
                    figures.uploader_successes += 1
                elif child.returncode != -signal.SIGKILL:
                    figures.uploader_failures += 1
            # The clean round: no faults, no kills.
            path.write_text(json.dumps(_eval_set(cases)))
            final = _uploader(path, manifest, emulator)
            out, err = final.communicate(timeout=300)
            if final.returncode != 0:
                print(f"the clean round failed:\n{err[-3000:]}", file=sys.stderr)
                return 1
            count, run_name = out.split()
            problems = _verify(emulator, cases, run_name)
        finally:
            emulator.stop()
    elapsed = time.monotonic() - started
    print(f"chaos seed {seed}: {figures.rounds} rounds in {elapsed:.0f} s, {len(cases)} cases")
    print(
        f"  faults: {figures.faults_registered} registered, {figures.faults_hit} hit; "
        f"SIGKILLs: {figures.uploader_kills} of the uploader, {figures.emulator_kills} of the "
        f"emulator; uploader rounds: {figures.uploader_successes} finished, "
        f"{figures.uploader_failures} failed (gave up on faults)"
    )
    print(f"  file edits: {len(figures.edits)} ({', '.join(figures.edits) or 'none'})")
    if problems:
        print("  FAILED:\n    " + "\n    ".join(problems))
        return 1
    print(f"  final state: set == file ({count} results, every case once, current content)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
