"""``--mock-tools golden`` on an MCP toolset: google-adk's McpToolset over stdio to a real MCP
server (the ``mcp`` SDK), whose tool writes a file. Mocked, the tool is never called and the
scores equal those of the real tool returning the same value."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk.tools.mcp_tool.mcp_toolset")
pytest.importorskip("mcp")

from conftest import work_offline
from fake_gemini import Seen, fake_gemini

from platform_eval.cli import main

SERVER = '''
import json
import os

try:
    from mcp.server.mcpserver import MCPServer as Server  # mcp 2
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server  # mcp 1

app = Server("forecasts")


@app.tool()
def get_forecast(city: str) -> str:
    """Today's forecast for a city (written down in the tool log)."""
    with open(os.environ["TOOL_LOG"], "a") as log:
        log.write(city + "\\n")
    return json.dumps({"city": city, "forecast": "sunny"})


if __name__ == "__main__":
    app.run()
'''

AGENT = """
import os
import sys

from google.adk.agents import Agent
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from mcp import StdioServerParameters

server = StdioServerParameters(
    command=sys.executable,
    args=[os.environ["MCP_SERVER"]],
    env={"TOOL_LOG": os.environ["TOOL_LOG"], "PATH": os.environ.get("PATH", "")},
)
root_agent = Agent(
    name="mcp_agent",
    model="gemini-2.5-flash",
    instruction="You give forecasts.",
    tools=[McpToolset(connection_params=StdioConnectionParams(server_params=server, timeout=30))],
)
"""

#: What the MCP tool returns through google-adk (an MCP CallToolResult as JSON).
RESULT = {
    "content": [{"type": "text", "text": json.dumps({"city": "Paris", "forecast": "sunny"})}],
    "isError": False,
}
EVAL_SET = {
    "eval_set_id": "mcp",
    "eval_cases": [
        {
            "eval_id": "paris",
            "conversation": [
                {
                    "invocation_id": "t0",
                    "user_content": {"role": "user", "parts": [{"text": "Forecast for Paris?"}]},
                    "final_response": {
                        "role": "model",
                        "parts": [{"text": "The forecast for Paris is sunny."}],
                    },
                    "intermediate_data": {
                        "tool_uses": [{"name": "get_forecast", "args": {"city": "Paris"}}],
                        "tool_responses": [{"name": "get_forecast", "response": RESULT}],
                    },
                }
            ],
        }
    ],
}


def _rule(seen: Seen) -> str | dict[str, Any]:
    parts = (seen.body.get("contents") or [{}])[-1].get("parts") or []
    responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
    if responses:
        result = responses[-1].get("response") or {}
        said = json.loads(result["content"][0]["text"])
        return f"The forecast for {said['city']} is {said['forecast']}."
    text = " ".join(p.get("text", "") for p in parts)
    if match := re.search(r"Forecast for ([A-Za-z]+)", text):
        call = {"name": "get_forecast", "args": {"city": match.group(1)}}
        return {"role": "model", "parts": [{"functionCall": call}]}
    return "How can I help?"


def _scores(output: str) -> dict[str, Any]:
    rows = json.loads(Path(output).read_text())["rows"]
    return {r["metric"]: r["score"] for r in rows}


@pytest.mark.slow  # an MCP server process per run, twice: CI runs it
def test_golden_mocks_answer_an_mcp_toolset_s_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work_offline(tmp_path, monkeypatch)
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / "mcp_agent").mkdir()
    (tmp_path / "mcp_agent" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "mcp_agent" / "agent.py").write_text(AGENT)
    (tmp_path / "mcp.evalset.json").write_text(json.dumps(EVAL_SET))
    criteria = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
    (tmp_path / "eval_config.json").write_text(json.dumps({"criteria": criteria}))
    log = tmp_path / "tool.log"
    monkeypatch.setenv("MCP_SERVER", str(tmp_path / "server.py"))
    monkeypatch.setenv("TOOL_LOG", str(log))
    with fake_gemini(_rule) as model:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", model.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        command = ["-q", "run", "mcp.evalset.json", "--agent", "mcp_agent"]
        command += ["--config", "eval_config.json", "--format", "json"]
        assert main([*command, "--mock-tools", "golden", "-o", "mocked.json"]) == 0
        assert not log.exists()  # the MCP tool was never called
        assert main([*command, "-o", "real.json"]) == 0
    assert log.read_text().split() == ["Paris"]
    assert (
        _scores("mocked.json")
        == _scores("real.json")
        == {
            "tool_trajectory_avg_score": 1.0,
            "response_match_score": 1.0,
        }
    )
