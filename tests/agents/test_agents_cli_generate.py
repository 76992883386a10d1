"""agents-cli's own `eval generate` (installed google-agents-cli, `--url` at a local `adk
api_server` whose model is the fake Gemini server) writes a trace file, and `platform-eval run`
grades it as it is."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_gemini import fake_gemini

from platform_eval.cli import main

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.slow,  # agents-cli's own generate, a server and an agent: CI runs it
]

AGENT = Path(__file__).resolve().parents[2] / "samples" / "agent" / "travel_agent"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def api_server(tmp_path: Path) -> Iterator[str]:
    """`adk api_server` serving the sample travel agent, its model the fake Gemini server."""
    pytest.importorskip("google.adk")
    pytest.importorskip("google.agents.cli.eval.cmd_generate")
    from agent_script import travel_rule

    agents = tmp_path / "agents"
    shutil.copytree(AGENT, agents / "travel_agent", ignore=shutil.ignore_patterns("__pycache__"))
    port = _free_port()
    with fake_gemini(travel_rule) as fake:
        env = {
            **os.environ,
            "GOOGLE_GEMINI_BASE_URL": fake.url,
            "GOOGLE_API_KEY": "test-key",
            "GOOGLE_GENAI_USE_VERTEXAI": "false",
        }
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "google.adk.cli",
                "api_server",
                "--port",
                str(port),
                str(agents),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    if httpx.get(f"{url}/list-apps", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if server.poll() is not None:
                    raise AssertionError(server.stderr.read().decode() if server.stderr else "")
                time.sleep(0.1)
            else:
                raise AssertionError("adk api_server did not start in 30 s")
            yield url
        finally:
            server.terminate()
            server.wait(timeout=10)


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def test_agents_cli_eval_generate_output_is_graded_by_run(
    api_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from click.testing import CliRunner
    from google.agents.cli.eval.cmd_generate import cmd_generate

    project = tmp_path / "project"
    (project / "app").mkdir(parents=True)
    (project / "agents-cli-manifest.yaml").write_text("agent_directory: app\n")
    dataset = {
        "eval_cases": [
            {
                "eval_case_id": "weather",
                "prompt": _text("user", "What is the weather in Rome?"),
                "reference": {"response": _text("model", "The weather in Rome is warm and dry.")},
            },
            {
                "eval_case_id": "booking",
                "prompt": _text("user", "Book 2 nights in Rome"),
                "reference": {"response": _text("model", "Booked, confirmation ROM-2.")},
            },
        ]
    }
    (project / "golden-dataset.json").write_text(json.dumps(dataset))
    monkeypatch.chdir(project)
    for name in ("PLATFORM_EVAL_EMULATOR_HOST", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    generated = CliRunner().invoke(
        cmd_generate,
        [
            "--dataset",
            "golden-dataset.json",
            "--url",
            api_server,
            "--app-name",
            "travel_agent",
            "-o",
            "traces.json",
        ],
    )
    assert generated.exit_code == 0, generated.output
    written = json.loads((project / "traces.json").read_text())
    assert [c["eval_case_id"] for c in written["eval_cases"]] == ["weather", "booking"]
    config = {"criteria": {"response_match_score": 0.5, "tool_trajectory_avg_score": 0.0}}
    (project / "config.json").write_text(json.dumps(config))
    code = main(["-q", "run", "traces.json", "--config", "config.json", "--format", "json"])
    rows = {(r["evalCaseId"], r["metric"]): r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert code == 0
    assert rows[("weather", "response_match_score")]["score"] == 1.0
    assert rows[("booking", "response_match_score")]["status"] == "PASSED"
