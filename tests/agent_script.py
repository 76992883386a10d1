"""How the fake model answers the test agents, scripted per user message.

The agent's model call: a function call for "weather in X" and "book N nights in X", an answer
built from the function's response once it came back, and a greeting by the name in the
system instruction for "who am I". ADK's simulated user: book a stay after the weather, then
stop. Anything else is a judge, answered as fake_gemini.adk_judge_rule answers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fake_gemini import Seen, adk_judge_rule

STOP = "</finished>"


def _last(body: dict[str, Any]) -> dict[str, Any]:
    contents = body.get("contents") or [{}]
    return contents[-1]


def _system(body: dict[str, Any]) -> str:
    parts = (body.get("systemInstruction") or {}).get("parts") or []
    return "\n".join(p.get("text", "") for p in parts)


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]}


def _after_tool(response: dict[str, Any]) -> str:
    name, result = response.get("name"), response.get("response") or {}
    if name == "get_weather":
        return f"The weather in {result.get('city')} is {result.get('forecast')}."
    if "error" in result:
        return f"Sorry, that failed: {result['error']}"
    return f"Booked, confirmation {result.get('confirmation')}."


def _simulated_user(seen: Seen) -> str:
    """Book the stay the plan asks for once the weather was given, then stop once booked."""
    plan, _, history = seen.prompt.partition("# Conversation History")
    if "Booked" in history:
        return STOP
    stay = re.search(r"book (\d+) nights? in ([A-Za-z]+)", plan, re.I)
    nights, city = (stay.group(1), stay.group(2)) if stay else ("2", "Rome")
    return f"Book {nights} nights in {city}"


def _agent(seen: Seen) -> str | dict[str, Any]:
    parts = _last(seen.body).get("parts") or []
    responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
    if responses:
        return _after_tool(responses[-1])
    text = " ".join(p.get("text", "") for p in parts).strip()
    if match := re.search(r"weather in ([A-Za-z ,]+?)\??$", text, re.I):
        return _call("get_weather", {"city": match.group(1).strip()})
    if match := re.search(r"book (\d+) nights? in ([A-Za-z ]+)", text, re.I):
        return _call("book_hotel", {"city": match.group(2).strip(), "nights": int(match.group(1))})
    if re.search(r"who am i", text, re.I):
        name = re.search(r"traveller's name is ([^.]*)\.", _system(seen.body))
        return f"You are {name.group(1).strip() if name else 'unknown'}."
    return "How can I help with your trip?"


def travel_rule(seen: Seen) -> str | dict[str, Any]:
    """The agent's calls (they declare its tools), ADK's simulated user, and any ADK judge."""
    if seen.body.get("tools"):
        return _agent(seen)
    if "Simulated User" in seen.prompt:
        return _simulated_user(seen)
    return adk_judge_rule(seen)


def synthesis_rule(seen: Seen) -> str | dict[str, Any]:
    """travel_rule, and the judge of samples/failure_analysis.py: scenarios written for the
    agent (half in cities it has no forecast for), a verdict that the forecast was given, and
    the failures in one cluster."""
    prompt = seen.prompt
    if "You write test scenarios" in prompt and not seen.body.get("tools"):
        asked = int(re.search(r"Write (\d+) different", prompt).group(1))  # type: ignore[union-attr]
        cities = ["Paris", "Lisbon", "Rome", "Madrid"] * 25
        return json.dumps(
            {
                "scenarios": [
                    {
                        "starting_prompt": f"What is the weather in {city}?" + "?" * (n // 4),
                        "conversation_plan": f"Then book 2 nights in {city}.",
                        "test_case_title": f"Stay in {city} {n}",
                    }
                    for n, city in enumerate(cities[:asked])
                ]
            }
        )
    if '{"questions"' in prompt:
        return json.dumps({"questions": ["Does the response give the forecast?"]})
    if "FAILURES:" in prompt:
        ids = re.findall(r"\[(F\d+)\]", prompt)
        cluster = {
            "l1_category": "Factuality and Grounding",
            "l2_category": "Missing forecast",
            "description": "the agent has no forecast for the city asked about",
            "failures": [{"id": i, "rationale": "the forecast was unknown"} for i in ids],
        }
        return json.dumps({"clusters": [cluster]})
    if '{"verdicts"' in prompt and "Write " in prompt:
        forecast = "is unknown" not in prompt
        booked = "Booked, confirmation" in prompt
        verdicts = [
            {"rubric_id": "forecast", "rubric": "The forecast is given.", "verdict": forecast},
            {"rubric_id": "booked", "rubric": "The stay is booked.", "verdict": booked},
        ]
        return json.dumps({"verdicts": verdicts})
    return travel_rule(seen)


def write_travel_agent(folder: Any, extra: str) -> None:
    """The travel agent (``agents/travel_agent`` of the project the ``agent_project`` fixture
    makes) copied to ``folder``, with ``extra`` code (dedented) at the end of its module."""
    import textwrap
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir()
    source = Path("agents/travel_agent/agent.py").read_text()
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(source + "\n" + textwrap.dedent(extra))


#: Judged criteria that read the agent's instruction and tool declarations (the app details
#: adk eval gives its judges), one sample each.
APP_DETAILS_CONFIG = {
    "criteria": {
        "rubric_based_final_response_quality_v1": {
            "threshold": 0.5,
            "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 1},
            "rubrics": [
                {
                    "rubric_id": "answers",
                    "rubric_content": {"text_property": "The answer gives what was asked."},
                }
            ],
        },
        "rubric_based_tool_use_quality_v1": {
            "threshold": 0.5,
            "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 1},
            "rubrics": [
                {
                    "rubric_id": "right_tool",
                    "rubric_content": {"text_property": "The agent calls the tool that fits."},
                }
            ],
        },
        "hallucinations_v1": {
            "threshold": 0.5,
            "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 1},
        },
    }
}


def voice_rule(said: str, setup: dict[str, Any], responses: list[dict[str, Any]]) -> Any:
    """The fake Live model of the voice agents (samples/voice, tests/agents/test_live_agent.py):
    it calls the weather tool when asked, then says what it answered; else it greets, or
    thanks, and says back what it heard."""
    from fake_gemini_live import LiveAnswer

    if "weather" in said and not responses:
        return LiveAnswer(call="get_weather", args={"city": "Paris"})
    if responses:
        return LiveAnswer(text=f"It is {responses[-1]['response']['sky']} in Paris.")
    if said.startswith("hello"):
        return LiveAnswer(text=f"Hello! You said {said}.")
    return LiveAnswer(text=f"Glad to help. You said {said}.")
