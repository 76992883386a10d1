"""``platform-eval run --agent`` beside ``adk eval`` (google-adk's own command, in a process of
its own), both pointed at one fake Gemini server: the same per-case scores for single-turn,
multi-turn and session-state cases, a judged criterion, and a conversation_scenario case run
by ADK's user simulator and scored by ADK's simulator-quality criterion."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from agent_script import APP_DETAILS_CONFIG
from fake_gemini import FakeGemini, judge_requests
from paths import SAMPLE_AGENTS

from platform_eval.cli import main

pytestmark = pytest.mark.slow

AGENTS = SAMPLE_AGENTS
ADK = Path(sys.executable).with_name("adk")

CONFIG = {
    "criteria": {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 0.8,
        "final_response_match_v2": {
            "threshold": 0.5,
            "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 3},
        },
    }
}
SCENARIO_CONFIG = {
    "criteria": {
        "per_turn_user_simulator_quality_v1": {
            "threshold": 0.5,
            "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 3},
        }
    }
}


@pytest.fixture
def model(agent_project: FakeGemini) -> FakeGemini:
    """The agent project (conftest), with this module's eval configs."""
    (Path.cwd() / "eval_config.json").write_text(json.dumps(CONFIG))
    (Path.cwd() / "scenario_config.json").write_text(json.dumps(SCENARIO_CONFIG))
    return agent_project


def adk_eval(eval_set: str, config: str) -> dict[tuple[str, str], float | None]:
    """Per case and metric, the scores `adk eval` wrote to its eval history."""
    history = Path("agents/travel_agent/.adk/eval_history")
    shutil.rmtree(history, ignore_errors=True)
    done = subprocess.run(
        [str(ADK), "eval", "agents/travel_agent", eval_set, "--config_file_path", config],
        env=dict(os.environ, ADK_DISABLE_LOAD_DOTENV="1"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Eval Run Summary" in done.stdout, done.stderr[-3000:]
    [written] = history.glob("*.evalset_result.json")
    result = json.loads(written.read_text())
    if isinstance(result, str):  # ADK writes the JSON as a JSON string
        result = json.loads(result)
    return {
        (case["eval_id"], metric["metric_name"]): metric["score"]
        for case in result["eval_case_results"]
        for metric in case["overall_eval_metric_results"]
    }


def ours(
    eval_set: str,
    config: str,
    capsys: pytest.CaptureFixture[str],
    agent: str = "agents/travel_agent",
) -> dict[tuple[str, str], Any]:
    main(
        [
            "-q",
            "--judge-model",
            "gemini-2.5-flash",
            "--no-judge-cache",
            "run",
            eval_set,
            "--agent",
            agent,
            "--config",
            config,
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    return {(r["evalCaseId"], r["metric"]): r["score"] for r in report["rows"]}


def test_run_agent_gives_adk_evals_scores(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = adk_eval("agents/travel.evalset.json", "eval_config.json")
    mine = ours("agents/travel.evalset.json", "eval_config.json", capsys)
    assert len(mine) == 4 * 3
    # adk eval adds its efficiency figures (token and call counts): not criteria of the config.
    assert {key: theirs[key] for key in mine} == pytest.approx(mine)
    assert mine[("weather_then_booking", "response_match_score")] == pytest.approx(0.8333333333)


CITIES = ["Paris", "Rome", "Oslo", "Lima", "Cairo"]


def _scenarios(count: int) -> dict[str, Any]:
    """Scenario cases: the weather in a city, then a stay of some nights there."""
    cases = []
    for index in range(count):
        city, nights = CITIES[index % len(CITIES)], 1 + index % 4
        cases.append(
            {
                "eval_id": f"trip_{index:02d}",
                "conversation_scenario": {
                    "starting_prompt": f"What is the weather in {city}?",
                    "conversation_plan": (
                        f"Ask about the weather in {city}. Then ask to book {nights} nights in "
                        f"{city}. Once the booking is confirmed, end the conversation."
                    ),
                },
            }
        )
    return {"eval_set_id": "trips", "eval_cases": cases}


def _judge_prompts(seen: list[Any]) -> Counter[str]:
    return Counter(s.prompt for s in seen if '"is_valid"' in s.prompt)


def test_scenarios_score_as_adk_eval_scores_them_with_the_same_prompts(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("trips.evalset.json").write_text(json.dumps(_scenarios(20)))
    theirs = adk_eval("trips.evalset.json", "scenario_config.json")
    adk_calls = len(model.seen)
    mine = ours("trips.evalset.json", "scenario_config.json", capsys)
    assert len(mine) == 20 and all(score is not None for score in mine.values())
    assert {key: theirs[key] for key in mine} == pytest.approx(mine)
    assert len(set(mine.values())) > 1  # the judge's verdicts differ from case to case
    # The judge read the same conversations, prompt for prompt.
    assert _judge_prompts(model.seen[:adk_calls]) == _judge_prompts(model.seen[adk_calls:])


#: The sample agent, its instruction reading a count of the turns it kept in the state: what it
#: is given changes from turn to turn, and adk eval records it per turn.
TURN_COUNTING = """
def _count_turns(callback_context):
    callback_context.state["turn_count"] = callback_context.state.get("turn_count", 0) + 1


root_agent.instruction = "You help travellers plan trips. This is turn {turn_count} of ours."
root_agent.before_agent_callback = _count_turns
"""


@pytest.mark.parametrize("instruction", ["the same every turn", "changing each turn"])
def test_judged_criteria_read_the_agents_instruction_and_tools_as_adk_eval_does(
    instruction: str, model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rubric criteria and the hallucination validator are given the agent's app details
    (its system instruction as sent, its tool declarations), in each turn what it was given
    in that turn: the same judge requests, and the same scores, as adk eval on the same
    agent; and on the same agent served by google-adk's api_server (its app details built from
    app-info and the session's state, as ADK builds them)."""
    from served_agents import adk_api_server

    if instruction == "changing each turn":
        agent = Path("agents/travel_agent/agent.py")
        agent.write_text(agent.read_text() + TURN_COUNTING)
    Path("app_details_config.json").write_text(json.dumps(APP_DETAILS_CONFIG))
    theirs = adk_eval("agents/travel.evalset.json", "app_details_config.json")
    adk_calls = len(model.seen)
    mine = ours("agents/travel.evalset.json", "app_details_config.json", capsys)
    assert len(mine) == 4 * 3 and all(score is not None for score in mine.values())
    assert {key: theirs[key] for key in mine} == pytest.approx(mine)
    theirs_asked = judge_requests(model.seen[:adk_calls])
    assert theirs_asked == judge_requests(model.seen[adk_calls:])
    assert any("You help travellers plan trips" in request for request in theirs_asked)
    assert any("book_hotel" in request for request in theirs_asked)
    if instruction == "changing each turn":
        assert any("This is turn 2 of ours." in request for request in theirs_asked)
    with adk_api_server(Path("agents")) as url:
        served_from = len(model.seen)
        served = ours("agents/travel.evalset.json", "app_details_config.json", capsys, url)
    served_asked = judge_requests(model.seen[served_from:])
    assert served == pytest.approx(mine)
    assert served_asked == theirs_asked


PERSONA = {
    "id": "terse_traveller",
    "description": "A busy traveller who writes short messages.",
    "behaviors": [
        {
            "name": "terse",
            "description": "Writes in as few words as it can.",
            "behavior_instructions": ["Use at most ten words a message."],
            "violation_rubrics": ["The message has more than ten words."],
        }
    ],
}


@pytest.mark.parametrize("persona", [PERSONA, "NOVICE"], ids=["written-out", "adk-persona-id"])
def test_a_scenarios_user_persona_reaches_the_simulator_quality_judge_as_in_adk_eval(
    persona: Any, model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """ADK renders its persona template for per_turn_user_simulator_quality_v1 when the
    scenario has a user_persona, written out or the id of one of its own: the same judge
    prompts, and scores, as adk eval."""
    from google.adk.evaluation.simulation.pre_built_personas import get_default_persona_registry

    trips = _scenarios(4)
    for case in trips["eval_cases"]:
        case["conversation_scenario"]["user_persona"] = persona
    Path("personas.evalset.json").write_text(json.dumps(trips))
    theirs = adk_eval("personas.evalset.json", "scenario_config.json")
    adk_calls = len(model.seen)
    mine = ours("personas.evalset.json", "scenario_config.json", capsys)
    assert len(mine) == 4 and all(score is not None for score in mine.values())
    assert {key: theirs[key] for key in mine} == pytest.approx(mine)
    theirs_asked = _judge_prompts(model.seen[:adk_calls])
    assert theirs_asked == _judge_prompts(model.seen[adk_calls:])
    described = (
        get_default_persona_registry().get_persona(persona).description
        if isinstance(persona, str)
        else persona["description"]
    )
    assert any(described in p for p in theirs_asked)


GROUNDING = {
    "webSearchQueries": ["weather today"],
    "groundingChunks": [{"web": {"uri": "https://weather.example/today", "title": "Forecast"}}],
    "groundingSupports": [
        {
            "segment": {"startIndex": 0, "endIndex": 11, "text": "The weather"},
            "groundingChunkIndices": [0],
        }
    ],
}


def test_grounding_metadata_reaches_the_judged_criteria_as_in_adk_eval(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """A google_search-style answer carries grounding metadata: ADK's rubric prompt and its
    hallucination check read it from the session; run --agent gives them the same."""
    travel = model.rule

    def grounded(seen: Any) -> Any:
        answered = travel(seen)
        if isinstance(answered, str) and answered.startswith("The weather in"):
            return {
                "content": {"role": "model", "parts": [{"text": answered}]},
                "groundingMetadata": GROUNDING,
            }
        return answered

    model.rule = grounded
    Path("app_details_config.json").write_text(json.dumps(APP_DETAILS_CONFIG))
    theirs = adk_eval("agents/travel.evalset.json", "app_details_config.json")
    adk_calls = len(model.seen)
    mine = ours("agents/travel.evalset.json", "app_details_config.json", capsys)
    assert {key: theirs[key] for key in mine} == pytest.approx(mine)
    theirs_asked = judge_requests(model.seen[:adk_calls])
    assert any("weather.example" in request for request in theirs_asked)
    assert theirs_asked == judge_requests(model.seen[adk_calls:])
