"""The served route against the real thing: ``adk api_server`` as a user starts it, a process of
its own (its default session storage, a SQLite file), its model the fake Gemini server. Our
command, a process of its own too, gives the rows the same agent gives in-process, its
deterministic and its judged criteria alike: the agent's model is sent the same requests and
the judges are asked the same prompts. Killed (SIGKILL) with cases still running, the same
command again runs only the cases the journal does not hold, and gives the same rows."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from agent_script import APP_DETAILS_CONFIG, travel_rule
from conftest import command_env, free_port
from fake_gemini import agent_requests, fake_gemini, judge_requests
from paths import SAMPLE_AGENTS
from sockets import until

pytestmark = [pytest.mark.slow]  # an api_server process and three commands: CI runs it

#: Deterministic criteria and ADK's judged ones (given the agent's instruction and tools).
CONFIG = {
    "criteria": {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 0.8,
        **APP_DETAILS_CONFIG["criteria"],
    }
}


@pytest.fixture
def api_server(tmp_path: Path) -> Iterator[tuple[str, Path, Any]]:
    """``adk api_server`` serving the sample agent, its model the fake Gemini (a little slow,
    so that a run can be killed with cases under way); the URL, the project folder, the fake."""
    shutil.copytree(
        SAMPLE_AGENTS, tmp_path / "agents", ignore=shutil.ignore_patterns("__pycache__")
    )
    cases = json.loads((tmp_path / "agents" / "travel.evalset.json").read_text())
    # Eight cases: the four, twice, under other ids.
    extra = [dict(c, eval_id=f"{c['eval_id']}_again") for c in cases["eval_cases"]]
    cases["eval_cases"] += extra
    (tmp_path / "eight.evalset.json").write_text(json.dumps(cases))
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    with fake_gemini(travel_rule, delay=0.3) as fake:
        port = free_port()
        adk = Path(sys.executable).parent / "adk"
        server = subprocess.Popen(
            [str(adk), "api_server", "--port", str(port), str(tmp_path / "agents")],
            cwd=tmp_path,
            env=command_env(fake.url),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            import httpx

            def up() -> bool:
                try:
                    return httpx.get(f"{url}/list-apps", timeout=2).status_code == 200
                except httpx.TransportError:
                    return server.poll() is not None

            until(up, timeout=120)
            assert server.poll() is None, "adk api_server exited"
            yield url, tmp_path, fake
        finally:
            server.terminate()
            server.wait(timeout=30)


def _command(folder: Path, model_url: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "platform_eval.cli", "-q", "--no-judge-cache", "run",
         "eight.evalset.json", "--config", "eval_config.json", "--format", "json",
         "--agent-concurrency", "2", *args],
        cwd=folder,
        env=command_env(model_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _rows(out: str) -> list[tuple[str, str, Any]]:
    rows = json.loads(out)["rows"]
    return sorted((r["evalCaseId"], r["metric"], r["score"]) for r in rows)


def test_a_real_api_server_scores_as_in_process_and_a_killed_run_resumes(
    api_server: tuple[str, Path, Any],
) -> None:
    url, folder, fake = api_server
    here = _command(folder, fake.url, "--agent", "agents/travel_agent")
    out, err = here.communicate(timeout=300)
    assert here.returncode == 1, err  # weather_oslo misses its thresholds, both times
    in_process = _rows(out)
    assert len(in_process) == 8 * 5 and all(score is not None for *_, score in in_process)
    asked_here, judged_here = agent_requests(fake.seen), judge_requests(fake.seen)
    fake.seen.clear()

    killed = _command(folder, fake.url, "--agent", url)
    journals = folder / ".platform-eval" / "agent-runs"
    try:
        until(lambda: len(list(journals.glob("*/*.json"))) >= 3 or killed.poll() is not None,
              timeout=240)  # fmt: skip
        assert killed.poll() is None, killed.communicate()
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
    finally:
        if killed.poll() is None:
            killed.kill()
    finished = len(list(journals.glob("*/*.json")))
    assert 3 <= finished < 8

    calls_before = len(agent_requests(fake.seen))
    judged_before = len(fake.seen)
    again = subprocess.run(
        [sys.executable, "-m", "platform_eval.cli", "--no-judge-cache", "run",
         "eight.evalset.json", "--agent", url, "--config", "eval_config.json", "--format",
         "json", "--agent-concurrency", "2"],
        cwd=folder, env=command_env(fake.url), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert again.returncode == 1, again.stderr
    assert _rows(again.stdout) == in_process
    # The agent's model was sent what it is sent in-process (a case cut short by the kill and
    # run again sends its first requests twice), and the judges were asked the same prompts.
    assert set(agent_requests(fake.seen)) == set(asked_here)
    assert judge_requests(fake.seen[judged_before:]) == judged_here
    assert f"({finished} finished by an earlier attempt, not run again)" in again.stderr
    # Only the cases the journal did not hold were asked of the model again.
    assert len(agent_requests(fake.seen)) - calls_before < 18
