"""Ctrl-C in every phase of ``run``: the upload, the agent, the judging, the wait for a run.
A real SIGINT to the command in a process of its own: it exits 130 within two seconds, one
line saying what to do, no traceback."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import command_env
from fake_gemini import fake_gemini
from paths import SAMPLE_AGENTS, SAMPLE_DATA
from sockets import until
from test_outages import silent_server

from platform_eval.emulator import Emulator

pytestmark = [pytest.mark.slow, pytest.mark.serial]  # each a whole command in a process of its own

#: Issue 37's Done-means: out within this after Ctrl-C.
EXIT_LIMIT = 2.0
WEATHER = (str(SAMPLE_DATA / "weather.evalset.json"),)
TRACES = ("--traces", str(SAMPLE_DATA / "weather_traces.otlp.json"))


def _interrupt(
    work: Path, args: list[str], under_way: Callable[[], Any], model_url: str = ""
) -> tuple[int, float, str]:
    """Starts the command, presses Ctrl-C once ``under_way()`` holds; its exit code, how long
    it took to exit after the signal, and its stderr."""
    env = command_env(model_url)
    process = subprocess.Popen(
        [sys.executable, "-m", "platform_eval.cli", "-q", *args],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A background job starts with SIGINT ignored; a terminal's command has the default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        until(lambda: under_way() or process.poll() is not None)
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)  # well inside the phase
        pressed = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
        return process.returncode, time.monotonic() - pressed, err
    finally:
        process.kill()
        process.wait()


def _assert_one_line_exit(code: int, took: float, err: str) -> None:
    assert code == 130, err
    assert took < EXIT_LIMIT, (took, err)
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "interrupted" in lines[0], err
    assert "run the same command again" in lines[0]


@pytest.fixture
def server() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


def _faults_used(emulator: Emulator) -> Callable[[], bool]:
    return lambda: not emulator.faults.pending()


def test_ctrl_c_during_the_upload(server: Emulator, tmp_path: Path) -> None:
    server.inject_fault(path="evaluationSets:import", kind="delay", delay=60.0)
    code, took, err = _interrupt(
        tmp_path,
        ["--endpoint", server.host_port, "run", *WEATHER, *TRACES, "--metrics", "exact_match"],
        _faults_used(server),
    )
    _assert_one_line_exit(code, took, err)


def test_ctrl_c_while_waiting_for_the_run(server: Emulator, tmp_path: Path) -> None:
    # Every look at the run's state is slow: the command is waiting on it.
    server.inject_fault(path="evaluationRuns/", method="GET", kind="delay", delay=60.0)
    code, took, err = _interrupt(
        tmp_path,
        ["--endpoint", server.host_port, "run", *WEATHER, *TRACES, "--metrics", "exact_match"],
        _faults_used(server),
    )
    _assert_one_line_exit(code, took, err)


def test_ctrl_c_while_the_agent_runs(tmp_path: Path) -> None:
    shutil.copytree(
        SAMPLE_AGENTS, tmp_path / "agents", ignore=shutil.ignore_patterns("__pycache__")
    )
    criteria = {"tool_trajectory_avg_score": 1.0}
    (tmp_path / "eval_config.json").write_text(json.dumps({"criteria": criteria}))
    with silent_server() as silent:
        args = ["run", "agents/travel.evalset.json", "--agent", "agents/travel_agent"]
        code, took, err = _interrupt(
            tmp_path, [*args, "--config", "eval_config.json"], lambda: silent.held, silent.url
        )
    _assert_one_line_exit(code, took, err)


def test_ctrl_c_while_judging_then_the_run_again_rejudges_nothing_cached(tmp_path: Path) -> None:
    """One judge call per turn: the first is answered, the others wait; Ctrl-C while they do.
    The command run again asks the model the others, not the answered one."""
    released = threading.Event()

    def first_answers_then_silence(seen: Any) -> str:
        if len(fake.seen) > 1:
            released.wait(60)
        # An answer the criterion reads (one it cannot read is not kept, and asked again).
        return '{"reasoning": "r", "is_the_agent_response_valid": "valid"}'

    criteria = {
        "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"num_samples": 1}}
    }
    (tmp_path / "config.json").write_text(json.dumps({"criteria": criteria}))
    run = ["--judge-model", "gemini-test", "run", *WEATHER, *TRACES, "--config", "config.json"]
    with fake_gemini(first_answers_then_silence) as fake:
        try:
            code, took, err = _interrupt(tmp_path, run, lambda: len(fake.seen) >= 2, fake.url)
        finally:
            released.set()
        _assert_one_line_exit(code, took, err)
        prompts = [seen.prompt for seen in fake.seen]
        again = subprocess.run(
            [sys.executable, "-m", "platform_eval.cli", "-q", *run],
            cwd=tmp_path,
            env=command_env(fake.url),
            capture_output=True,
            text=True,
            timeout=120,
        )
        asked_again = [seen.prompt for seen in fake.seen[len(prompts) :]]
    assert again.returncode in (0, 1) and "Traceback" not in again.stderr, again.stderr
    # Asked again: what was asked and never answered, and what was not yet asked; never the
    # answered call.
    assert prompts[0] not in asked_again
    assert set(prompts[1:]) <= set(asked_again) and len(set(asked_again)) == len(asked_again)
