"""``--agent projects/P/locations/L/reasoningEngines/ID``: the cases run on an Agent Runtime
through its ``:query`` (sessions) and ``:streamQuery`` (turns) methods, as the official SDK's
``run_inference`` sends them. A local Agent Runtime (tests/agent_runtime_server.py: the ADK app
template a deployment runs, ``AdkApp``, behind that REST API, in a process of its own) serves the
sample agent, its model the fake Gemini; its rows equal the same agent's run in-process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("vertexai.agent_engines")

from fake_gemini import FakeGemini
from paths import TESTS

from platform_eval.agents.remote import ServedAgent, agent_runtime_url, is_agent_url
from platform_eval.cli import main

CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}


@pytest.fixture
def runtime(agent_project: FakeGemini, tmp_path: Path) -> Iterator[str]:
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    server = subprocess.Popen(
        [
            sys.executable,
            str(TESTS / "agent_runtime_server.py"),
            str(tmp_path / "agents"),
            "travel_agent",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), "the local Agent Runtime did not start"
        yield url
    finally:
        server.terminate()
        server.wait(30)


def _rows(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    rows = json.loads(capsys.readouterr().out)["rows"]
    return [{k: v for k, v in r.items() if k not in ("item", "request")} for r in rows]


def _run(*args: str) -> int:
    common = ["--config", "eval_config.json", "--format", "json"]
    return main(["-q", "run", "agents/travel.evalset.json", *args, *common])


def test_an_agent_runtime_is_named_by_its_resource_or_its_url() -> None:
    name = "projects/my-proj/locations/europe-west4/reasoningEngines/123"
    url = f"https://europe-west4-aiplatform.googleapis.com/v1beta1/{name}"
    assert agent_runtime_url(name) == url
    assert agent_runtime_url(url) == url
    assert is_agent_url(name) and ServedAgent(name).url == url and ServedAgent(name).is_runtime
    assert agent_runtime_url("https://my-agent.run.app") is None
    assert not ServedAgent("https://my-agent.run.app").is_runtime
    assert agent_runtime_url(f"{name}/sessions/1") is None  # a session, not the engine


@pytest.mark.slow  # a process of its own importing the ADK template, and two agent runs
def test_an_agent_runtime_scores_as_the_same_agent_run_here(
    runtime: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    assert _run("--agent", "agents/travel_agent") == 1  # weather_oslo misses its thresholds
    here = _rows(capsys)
    assert _run("--agent", runtime, "--save-sessions", "sessions") == 1
    there = _rows(capsys)
    # who_am_i starts from its session_input.state, given to the template's create_session.
    assert there == here and len(here) == 8
    assert len(list(Path("sessions").iterdir())) == 4
    assert any("an Agent Runtime gives no app details" in r.getMessage() for r in caplog.records)
    assert _run("--traces", "sessions") == 1
    assert _rows(capsys) == there  # the runtime's sessions, saved and read back


@pytest.mark.slow
def test_what_an_agent_runtime_cannot_do_is_said_in_one_line(
    runtime: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("--agent", runtime, "--app-name", "travel_agent") == 2
    err = capsys.readouterr().err
    assert "an Agent Runtime serves one app" in err and "Traceback" not in err


@pytest.mark.anyio
async def test_an_agent_runtime_without_credentials_is_one_line_saying_what_to_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import httpx

    from platform_eval.agents.remote import ServedAgentError
    from platform_eval.agents.served import _GoogleAccess

    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
    sent: list[httpx.Request] = []
    transport = httpx.MockTransport(lambda request: sent.append(request) or httpx.Response(200))
    async with httpx.AsyncClient(auth=_GoogleAccess(), transport=transport) as http:
        with pytest.raises(ServedAgentError, match="application-default login"):
            await http.post("https://us-central1-aiplatform.googleapis.com/v1beta1/x:query")
    assert sent == []  # nothing went without its token
