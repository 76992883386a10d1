"""ADK's judged criteria: google-adk's evaluators and ``platform-eval``, one fake judge.

Twenty-four cases (one to three turns, with and without tool calls, case and turn rubrics) are
run by a real ADK agent (google-adk's Runner, a scripted model, no network). Then each judged
criterion is computed twice against the same fake Gemini server:

- by google-adk as ``adk eval`` does: the eval case's conversation as expected invocations, the
  session's events read by ADK's ``EvaluationGenerator``, rubrics copied as its local eval
  service copies them, the evaluator from ADK's registry with its own Gemini judge;
- by platform-eval: the eval set file and the session files uploaded to the emulator, a run
  with the eval config, the judge a ``Judging`` with its cache.

Both must send the same prompts (as multisets, byte for byte) and give the same per-case scores.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_gemini import FakeGemini, adk_judge_rule, fake_gemini

pytest.importorskip("google.adk.evaluation.final_response_match_v2")

from adk_runs import ScriptedModel, call, run_agent, say
from google.adk.agents import LlmAgent
from google.adk.evaluation import local_eval_service
from google.adk.evaluation.eval_case import EvalCase
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.evaluation_generator import EvaluationGenerator
from google.adk.evaluation.metric_evaluator_registry import (
    DEFAULT_METRIC_EVALUATOR_REGISTRY,
)
from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from platform_eval import jobs
from platform_eval.emulator import Emulator
from platform_eval.judges import Judging
from platform_eval.metrics import Judges
from platform_eval.results import fetch_results

JUDGE = "gemini-2.5-flash"
CRITERIA: dict[str, Any] = {
    "final_response_match_v2": {
        "threshold": 0.5,
        "judge_model_options": {"judge_model": JUDGE, "num_samples": 3},
    },
    "rubric_based_final_response_quality_v1": {
        "threshold": 0.5,
        "judge_model_options": {"judge_model": JUDGE, "num_samples": 2},
        "rubrics": [
            {"rubric_id": "concise", "rubric_content": {"text_property": "The answer is short."}}
        ],
    },
    "rubric_based_tool_use_quality_v1": {
        "threshold": 0.5,
        "judge_model_options": {"judge_model": JUDGE, "num_samples": 2},
        "rubrics": [
            {
                "rubric_id": "right_tool",
                "rubric_content": {"text_property": "The agent looks the answer up with a tool."},
            }
        ],
    },
    "hallucinations_v1": {
        "threshold": 0.5,
        "judge_model_options": {"judge_model": JUDGE, "num_samples": 1},
    },
}
CITIES = ["Paris", "Oslo", "Lima", "Cairo", "Quito", "Hanoi", "Perth", "Bern"]


def get_weather(city: str) -> dict[str, str]:
    """The weather forecast of a city."""
    return {"city": city, "forecast": "sunny" if len(city) % 2 else "rain"}


def _case(index: int) -> tuple[dict[str, Any], list[list[types.Content]], list[str]]:
    """An eval case (ADK's JSON), what the agent's model says per turn, and the questions."""
    turns = 1 + index % 3
    conversation = []
    scripts = []
    questions = []
    for turn in range(turns):
        city = CITIES[(index + turn) % len(CITIES)]
        question = f"Case {index}, turn {turn}: what is the weather in {city}?"
        forecast = get_weather(city)["forecast"]
        expected = f"It is {forecast} in {city}."
        uses_tool = (index + turn) % 4 != 3
        answer = expected if index % 5 else f"Probably {forecast}. I think so."
        scripts.append(
            [call("get_weather", city=city), say(answer)] if uses_tool else [say(answer)]
        )
        questions.append(question)
        invocation: dict[str, Any] = {
            "invocation_id": f"turn-{turn}",
            "user_content": {"role": "user", "parts": [{"text": question}]},
            "final_response": {"role": "model", "parts": [{"text": expected}]},
            "intermediate_data": {
                "tool_uses": [{"name": "get_weather", "args": {"city": city}}],
                "tool_responses": [],
                "intermediate_responses": [],
            },
        }
        if index % 4 == 1:
            invocation["rubrics"] = [
                {
                    "rubric_id": f"names_{city.lower()}",
                    "rubric_content": {"text_property": f"The answer names {city}."},
                    "type": "FINAL_RESPONSE_QUALITY",
                }
            ]
        conversation.append(invocation)
    case: dict[str, Any] = {"eval_id": f"case-{index}", "conversation": conversation}
    if index % 3 == 2:
        case["rubrics"] = [
            {
                "rubric_id": "one_call_per_city",
                "rubric_content": {"text_property": "The agent calls get_weather once per city."},
                "type": "TOOL_USE_QUALITY",
            }
        ]
    return case, scripts, questions


def _session(scripts: list[list[types.Content]], questions: list[str]) -> Any:
    agent = LlmAgent(
        name="weather_agent",
        model=ScriptedModel(script=[content for turn in scripts for content in turn]),
        instruction="Answer questions about the weather.",
        tools=[get_weather],
    )
    return Session.model_validate(asyncio.run(run_agent(agent, questions)))


@pytest.fixture(scope="module")
def recorded() -> list[tuple[dict[str, Any], Any]]:
    """24 eval cases, each with the session of a real ADK run answering it."""
    out = []
    for index in range(24):
        case, scripts, questions = _case(index)
        out.append((case, _session(scripts, questions)))
    return out


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGemini]:
    with fake_gemini(adk_judge_rule) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
        yield fake


async def _adk_scores(recorded: list[tuple[dict[str, Any], Any]]) -> dict[tuple[str, str], Any]:
    scores = {}
    for case_json, session in recorded:
        eval_case = EvalCase.model_validate(case_json)
        for name, criterion in CRITERIA.items():
            actual = EvaluationGenerator.convert_events_to_eval_invocations(
                list[Event](session.events)
            )
            local_eval_service._copy_eval_case_rubrics_to_actual_invocations(eval_case, actual)
            local_eval_service._copy_invocation_rubrics_to_actual_invocations(
                eval_case.conversation, actual
            )
            metric = EvalMetric(
                metric_name=name, threshold=criterion["threshold"], criterion=criterion
            )
            evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)
            result = await evaluator.evaluate_invocations(actual, eval_case.conversation)
            scores[(eval_case.eval_id, name)] = result.overall_score
    return scores


def _ours(
    recorded: list[tuple[dict[str, Any], Any]],
    tmp_path: Path,
    cache: Path | None,
    concurrency: int = 8,
) -> dict[tuple[str, str], Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    eval_set = tmp_path / "weather.evalset.json"
    eval_set.write_text(
        json.dumps({"eval_set_id": "weather", "eval_cases": [case for case, _ in recorded]})
    )
    sessions = tmp_path / "sessions"
    sessions.mkdir(exist_ok=True)
    for case, session in recorded:
        (sessions / f"{case['eval_id']}.json").write_text(
            session.model_dump_json(exclude_none=True)
        )
    config = tmp_path / "eval_config.json"
    config.write_text(json.dumps({"criteria": CRITERIA}))
    judging = Judging(JUDGE, cache=cache, concurrency=concurrency)
    try:
        with Emulator(judges=Judges(model=judging)) as emulator, emulator.client("p") as client:
            evaluation = jobs.evaluate(
                client,
                eval_set,
                traces=[sessions],
                config=config,
                manifest=tmp_path / "manifest.jsonl",
                poll_interval=0.05,
                timeout=300,
            )
            results = fetch_results(client, evaluation.run)
    finally:
        judging.close()
    return {(row.eval_case_id, row.metric): row.score for row in results.rows}


@pytest.mark.slow
def test_adk_and_platform_eval_send_the_same_prompts_and_give_the_same_scores(
    recorded: list[tuple[dict[str, Any], Any]], judge: FakeGemini, tmp_path: Path
) -> None:
    adk_scores = asyncio.run(_adk_scores(recorded))
    adk_prompts = Counter(seen.prompt for seen in judge.seen)
    adk_bodies = Counter(
        json.dumps({k: v for k, v in seen.body.items()}, sort_keys=True) for seen in judge.seen
    )
    judge.seen.clear()

    # No cache here: it answers a prompt sent twice (the same answer in two cases) once.
    ours = _ours(recorded, tmp_path, cache=None)
    our_prompts = Counter(seen.prompt for seen in judge.seen)
    our_bodies = Counter(json.dumps(seen.body, sort_keys=True) for seen in judge.seen)

    assert sum(adk_prompts.values()) > 200
    only_adk = adk_prompts - our_prompts
    only_ours = our_prompts - adk_prompts
    assert not only_adk and not only_ours, (
        f"{sum(only_adk.values())} prompts only ADK sent, e.g. {next(iter(only_adk), '')[-600:]!r}; "
        f"{sum(only_ours.values())} only we sent, e.g. {next(iter(only_ours), '')[-600:]!r}"
    )
    # The whole request bodies too: generation settings, roles, everything the model reads.
    assert adk_bodies == our_bodies
    assert ours == adk_scores
    # The scores are not all alike: the comparison says something.
    assert len({score for score in adk_scores.values()}) > 3


@pytest.mark.slow
def test_a_second_run_makes_no_model_call_and_gives_the_same_scores(
    recorded: list[tuple[dict[str, Any], Any]], judge: FakeGemini, tmp_path: Path
) -> None:
    cache = tmp_path / "judge-cache.sqlite"
    first = _ours(recorded[:6], tmp_path / "first", cache)
    made = len(judge.seen)
    assert made > 0
    second = _ours(recorded[:6], tmp_path / "second", cache)
    assert len(judge.seen) == made  # every answer replayed from the cache
    assert second == first


@pytest.mark.slow
def test_cases_are_judged_concurrently_up_to_the_limit(
    recorded: list[tuple[dict[str, Any], Any]], judge: FakeGemini, tmp_path: Path
) -> None:
    judge.delay = 0.05  # a model's latency: calls overlap only if cases are judged at once
    serial = _ours(recorded[:12], tmp_path / "serial", None, concurrency=1)
    assert judge.most_in_flight == 1
    judge.most_in_flight = 0
    concurrent = _ours(recorded[:12], tmp_path / "concurrent", None, concurrency=4)
    assert judge.most_in_flight == 4
    assert concurrent == serial
