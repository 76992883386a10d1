"""Outages as a user meets them: the command in a process of its own, its model down in each
way a model is down. Each ends in seconds (the first model call is a probe) with a few lines
on stderr and no traceback."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import command_env
from fake_gemini import fake_gemini
from paths import SAMPLE_AGENTS, SAMPLE_DATA

pytest.importorskip("google.adk")

pytestmark = [pytest.mark.slow, pytest.mark.serial]  # each a whole command in a process of its own

#: The Done-means of issue 37: an outage is said within this, in at most three lines.
WALL_LIMIT = 15.0


@contextmanager
def _model_down(how: str) -> Iterator[str]:
    """A model endpoint that fails as ``how`` says; yields its base URL."""
    if how == "refused":
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]
        yield f"http://127.0.0.1:{port}"  # nothing listens there any more
    elif how == "no such host":
        yield "http://model.invalid"  # .invalid never resolves (RFC 2606)
    elif how == "silent":
        with silent_server() as silent:
            yield silent.url
    else:
        with fake_gemini(lambda seen: "never") as fake:
            fake.fail_next(int(how), count=10_000, retry_after=None)
            yield fake.url


@dataclass
class Silent:
    url: str
    #: The connections taken (and never answered).
    held: list[socket.socket] = field(default_factory=list)


@contextmanager
def silent_server() -> Iterator[Silent]:
    """Takes connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    silent = Silent(f"http://127.0.0.1:{listener.getsockname()[1]}")

    def take() -> None:
        while True:
            try:
                silent.held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=take, daemon=True).start()
    try:
        yield silent
    finally:
        listener.close()
        for connection in silent.held:
            connection.close()


def _command(
    work: Path, model_url: str, *args: str
) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = command_env(model_url)
    env["PLATFORM_EVAL_AGENT_PROBE_TIMEOUT"] = "2"  # the silent model's wait, shortened
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "platform_eval.cli", *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return time.monotonic() - started, done


def _agent_project(work: Path) -> None:
    shutil.copytree(SAMPLE_AGENTS, work / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    criteria = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
    (work / "eval_config.json").write_text(json.dumps({"criteria": criteria}))


AGENT_RUN = ("run", "agents/travel.evalset.json", "--agent", "agents/travel_agent")


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("refused", "cannot connect to 127.0.0.1"),
        ("no such host", "cannot connect to model.invalid:80"),
        ("503", "ServerError: 503"),
        ("404", "ClientError: 404"),
        ("silent", "no answer within 2 s (PLATFORM_EVAL_AGENT_PROBE_TIMEOUT"),
    ],
)
def test_an_agent_model_that_is_down_ends_the_run_in_seconds_in_one_line(
    how: str, said: str, tmp_path: Path
) -> None:
    _agent_project(tmp_path)
    with _model_down(how) as url:
        took, done = _command(tmp_path, url, "-q", *AGENT_RUN, "--config", "eval_config.json")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr
    assert took < WALL_LIMIT, (took, done.stderr)
    assert len(lines) <= 3 and "Traceback" not in done.stderr, done.stderr
    assert "the agent's model gemini-2.5-flash cannot be used" in lines[-1]
    assert said in lines[-1], lines[-1]


def _judged_run(work: Path) -> tuple[str, ...]:
    rubric = {"rubric_id": "polite", "rubric_content": {"text_property": "It is polite."}}
    criteria = {
        "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"num_samples": 1}},
        "rubric_based_final_response_quality_v1": {"threshold": 0.5, "rubrics": [rubric]},
    }
    (work / "config.json").write_text(json.dumps({"criteria": criteria}))
    return (
        *("--judge-model", "gemini-test", "run", str(SAMPLE_DATA / "weather.evalset.json")),
        *("--traces", str(SAMPLE_DATA / "weather_traces.otlp.json"), "--config", "config.json"),
    )


@pytest.mark.parametrize(
    ("how", "said"), [("503", "503 UNAVAILABLE"), ("refused", "connection refused")]
)
@pytest.mark.parametrize("quiet", [True, False], ids=["quiet", "default"])
def test_a_judge_that_is_down_is_said_in_seconds_without_tracebacks(
    how: str, said: str, quiet: bool, tmp_path: Path
) -> None:
    with _model_down(how) as url:
        took, done = _command(tmp_path, url, *(["-q"] if quiet else []), *_judged_run(tmp_path))
    assert done.returncode == 1, done.stderr
    assert took < WALL_LIMIT, (took, done.stderr)
    assert "Traceback" not in done.stderr and "WARNING" not in done.stderr, done.stderr
    if quiet:
        assert len(done.stderr.strip().splitlines()) <= 3, done.stderr
    verdict = done.stdout.strip().splitlines()[-1]
    assert verdict.startswith("nothing could be evaluated: not evaluated: judging stopped")
    assert said in verdict, verdict


def test_a_store_that_cannot_write_is_said_in_two_lines_not_tracebacks(tmp_path: Path) -> None:
    """The embedded emulator's file cannot grow (a file-size limit, as a full disk): the
    database's own words reach the user once, no server traceback, no "could not reach"."""
    import resource

    cases = [
        {
            "eval_id": f"c{n}",
            "conversation": [
                {
                    "invocation_id": "t",
                    "user_content": {"role": "user", "parts": [{"text": f"{'x' * 2000} {n}"}]},
                    "final_response": {"role": "model", "parts": [{"text": "y" * 2000}]},
                }
            ],
        }
        for n in range(100)
    ]
    (tmp_path / "big.evalset.json").write_text(
        json.dumps({"eval_set_id": "big", "eval_cases": cases})
    )

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "platform_eval.cli",
            "run",
            "big.evalset.json",
            "--metrics",
            "exact_match",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=small_files,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "could not reach" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) <= 3, done.stderr[:3000]
    assert "the emulator's database failed: " in lines[-1]
    assert "the set was not created (re-run to retry" in lines[-1]
