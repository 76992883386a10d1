"""Soak: two emulators on one database, CLI runs three at a time, SIGKILLs, a disk filled and freed.

Two ``platform-eval emulator start`` processes share one SQLite file. Rounds of three concurrent
``platform-eval run`` commands (each pointed at one of the two emulators, all in one folder)
upload an eval set and run it. At random, an emulator or a CLI command is SIGKILLed (a killed
emulator is restarted on the same file), and once the disk holding the database is filled and
then freed. At the end every run the database holds must be finished, SUCCEEDED with exactly
one result per item of its set, or FAILED with a reason; a run a killed emulator was executing
is taken over by the other (its lease ran out).

The full disk is a real one: a tmpfs mounted for the database (root only); without root that
phase is skipped, saying so.

    python tools/soak.py --rounds 12 --cases 30 --seed 5      (nox -s soak)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from platform_eval import Client
from platform_eval.types import EvaluationRun, EvaluationRunState

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chaos import EmulatorProcess, _eval_set, _free_port

PROJECT = "soak-project"


def _mount_small_disk(where: Path, megabytes: int) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(where)],
        capture_output=True,
    )
    return done.returncode == 0


def _fill(disk: Path) -> Path:
    """Writes a file until the disk is full; returns it (delete it to free the disk)."""
    filler = disk / "filler.bin"
    block = b"\0" * 2**20
    with open(filler, "wb") as out, contextlib.suppress(OSError):
        while True:
            out.write(block)
            out.flush()
    return filler


def _write_sessions(folder: Path, cases: dict[str, str]) -> None:
    """An ADK session export per case, answering as the golden answer does."""
    folder.mkdir()
    for case_id, answer in cases.items():
        events = [
            {"author": "user", "content": {"role": "user", "parts": [{"text": f"ask {case_id}"}]}},
            {"author": "soak_agent", "content": {"role": "model", "parts": [{"text": answer}]}},
        ]
        session = {
            "id": f"session-{case_id}",
            "app_name": "soak",
            "user_id": "user",
            "state": {},
            "events": [
                {**event, "id": f"{case_id}-{n}", "invocation_id": f"{case_id}-0", "timestamp": n}
                for n, event in enumerate(events, 1)
            ],
            "last_update_time": 2.0,
        }
        (folder / f"{case_id}.session.json").write_text(json.dumps(session))


def _cli_run(workdir: Path, evalset: Path, port: int, index: int) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PLATFORM_EVAL_EMULATOR_HOST": f"127.0.0.1:{port}",
        "GOOGLE_CLOUD_PROJECT": PROJECT,
    }
    output = workdir / f"report-{index}.json"
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "platform_eval.cli",
            "run",
            str(evalset),
            "--traces",
            str(workdir / "sessions"),
            "--metrics",
            "exact_match",
            "--threshold",
            "exact_match=1",
            "--timeout",
            "300",
            "--output",
            str(output),
        ],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _settle(client: Client, deadline: float) -> list[EvaluationRun]:
    """Every run of the project, once none is still pending or running (or the deadline)."""
    runs: list[EvaluationRun] = []
    while time.monotonic() < deadline:
        runs = list(client.list_runs())
        if all(run.done for run in runs):
            break
        time.sleep(0.5)
    return runs


def _check(client: Client, runs: list[EvaluationRun]) -> tuple[list[str], Counter[str]]:
    problems: list[str] = []
    states: Counter[str] = Counter()
    for run in runs:
        states[str(run.state)] += 1
        if run.state == EvaluationRunState.FAILED:
            if run.error is None or not run.error.message:
                problems.append(f"{run.name} FAILED without a reason")
            continue
        if run.state != EvaluationRunState.SUCCEEDED:
            problems.append(f"{run.name} ended {run.state}")
            continue
        assert run.data_source is not None and run.data_source.evaluation_set
        items = client.get_set(run.data_source.evaluation_set).evaluation_items or []
        results = client.get_results(run)
        scored = Counter(
            str(r.evaluation_response.evaluation_request) for r in results if r.evaluation_response
        )
        twice = [item for item, count in scored.items() if count > 1]
        if twice:
            problems.append(f"{run.name}: {len(twice)} items with more than one result")
        if sorted(scored) != sorted(items):
            problems.append(f"{run.name}: {len(results)} results for {len(items)} items")
    return problems, states


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(10**6)
    rng = random.Random(seed)
    kills = Counter[str]()
    cli_exits: Counter[int] = Counter()
    cli_errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="platform-eval-soak-") as tmp:
        workdir = Path(tmp)
        disk = workdir / "disk"
        mounted = _mount_small_disk(disk, 64)
        evalset = workdir / "soak.evalset.json"
        cases = {f"case-{i}": f"answer {i}" for i in range(args.cases)}
        evalset.write_text(json.dumps(_eval_set(cases)))
        _write_sessions(workdir / "sessions", cases)
        db = disk / "emulator.sqlite"
        emulators = [EmulatorProcess(db, _free_port()), EmulatorProcess(db, _free_port())]
        for emulator in emulators:
            emulator.start()
        fill_round = rng.randrange(1, max(args.rounds - 1, 2)) if mounted else -1
        disk_note = "not filled: mounting a small disk needs root"
        started = time.monotonic()
        try:
            for round_index in range(args.rounds):
                commands = [
                    _cli_run(workdir, evalset, rng.choice(emulators).port, round_index * 3 + i)
                    for i in range(3)
                ]
                filler = None
                if round_index == fill_round:
                    time.sleep(rng.uniform(0.2, 1.0))
                    filler = _fill(disk)
                    disk_note = f"filled in round {round_index + 1}, freed 2 s later"
                    time.sleep(2)
                    filler.unlink()
                if rng.random() < 0.5:
                    time.sleep(rng.uniform(0.1, 2.0))
                    victim = rng.choice(emulators)
                    victim.kill()
                    kills["emulator"] += 1
                    victim.start()
                if rng.random() < 0.4:
                    time.sleep(rng.uniform(0.1, 1.5))
                    command = rng.choice(commands)
                    if command.poll() is None:
                        command.send_signal(signal.SIGKILL)
                        kills["cli"] += 1
                for command in commands:
                    _, err = command.communicate(timeout=600)
                    cli_exits[command.returncode] += 1
                    if command.returncode not in (0, -signal.SIGKILL):
                        # A CLI run that failed says why in one line: keep the last of them.
                        cli_errors.append(err.strip().splitlines()[-1] if err.strip() else "")
            # Listed through one emulator, read through the other: both see one database.
            with Client(PROJECT, api_endpoint=emulators[0].url) as first:
                runs = _settle(first, time.monotonic() + 300)
            with Client(PROJECT, api_endpoint=emulators[1].url) as second:
                problems, states = _check(second, runs)
        finally:
            for emulator in emulators:
                emulator.stop()
            if mounted:
                subprocess.run(["umount", str(disk)], check=False)
    elapsed = time.monotonic() - started
    print(
        f"soak seed {seed}: {args.rounds} rounds of 3 CLI runs in {elapsed:.0f} s, {len(runs)} runs"
    )
    print(
        f"  SIGKILLs: {kills['emulator']} of an emulator, {kills['cli']} of a CLI run; "
        f"disk {disk_note}"
    )
    print(f"  CLI exits: {dict(sorted(cli_exits.items()))}; runs: {dict(sorted(states.items()))}")
    for line in sorted(set(cli_errors)):
        print(f"  a CLI run ended: {line}")
    if problems:
        print("  FAILED:\n    " + "\n    ".join(problems))
        return 1
    print("  every run finished: SUCCEEDED with each result exactly once, or FAILED with a reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
