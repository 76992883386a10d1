"""The evaluation plan: every way in (``platform_eval.evaluate``, ``jobs.evaluate``, the ``run``
command, the pytest plugin) reads its options into one plan, checked in one place before a
target is asked anything or anything is uploaded."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from paths import SAMPLE_DATA

import platform_eval
from platform_eval import jobs
from platform_eval.cli import main
from platform_eval.client import Client
from platform_eval.formats.dataset_items import DatasetCases
from platform_eval.jobs.plan import AgentRun, NoMetricsError, Recorded
from platform_eval.traces import Conversation

EVALSET = SAMPLE_DATA / "weather.evalset.json"
TRACES = SAMPLE_DATA / "weather_traces.otlp.json"


def test_a_plan_holds_the_cases_one_source_of_candidates_and_the_checked_metrics() -> None:
    plan = jobs.build_plan(
        str(EVALSET),
        traces=[TRACES],
        metrics=["rouge_1", "general_quality"],
        thresholds={"rouge_1": 0.5},
        poll_interval=0.5,
    )
    assert plan.source == str(EVALSET) and len(plan.cases) > 0
    assert plan.candidates == Recorded((TRACES,), None)
    # An unversioned predefined name is its newest version, in the plan as everywhere.
    assert plan.metrics.metrics == ("rouge_1", "general_quality_v2")
    assert plan.metrics.thresholds == {"rouge_1": 0.5}
    assert plan.run.poll_interval == 0.5 and plan.run.wait
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.candidate = "other"  # type: ignore[misc]


def test_the_config_thresholds_come_first_and_given_ones_over_them(tmp_path: Path) -> None:
    config = {"criteria": {"response_match_score": 0.8, "tool_trajectory_avg_score": 1.0}}
    plan = jobs.build_plan(
        str(EVALSET), traces=[TRACES], config=config, thresholds={"response_match_score": 0.5}
    )
    assert plan.metrics.thresholds == {
        "response_match_score": 0.5,
        "tool_trajectory_avg_score": 1.0,
    }


@pytest.mark.parametrize(
    ("options", "error", "said"),
    [
        ({"metrics": ["rouge_1"], "thresholds": {"bleu": 0.5}}, jobs.ThresholdError, "no metric"),
        ({"metrics": ["rouge_1"], "thresholds": {"rouge_1": 7}}, jobs.ThresholdError, "range"),
        ({}, NoMetricsError, "needs metrics"),
        (
            {"metrics": ["rouge_1"], "traces": [TRACES], "agent": "agent_dir"},
            jobs.PlanError,
            "not both",
        ),
        (
            {"metrics": ["rouge_1"], "thresholds": {"pass^3": 0.8}, "agent": "agent_dir"},
            jobs.ThresholdError,
            "needs 3 runs of each case or more",
        ),
    ],
)
def test_what_cannot_be_is_refused_when_the_plan_is_built(
    options: dict[str, Any], error: type[Exception], said: str
) -> None:
    with pytest.raises(error, match=said):
        jobs.build_plan(str(EVALSET), **options)


def test_a_misspelt_option_is_an_error_naming_it() -> None:
    with pytest.raises(TypeError, match="thresholdz"):
        jobs.build_plan(str(EVALSET), metrics=["rouge_1"], thresholdz={"rouge_1": 1})  # type: ignore[call-arg]


def test_an_agent_is_planned_with_its_options_and_the_configs_rules(tmp_path: Path) -> None:
    config = {
        "criteria": {
            "tool_trajectory_avg_score": {
                "threshold": 1.0,
                "args_match": {"*": {"request_id": "ignore"}},
            }
        }
    }
    plan = jobs.build_plan(
        str(EVALSET), agent="agent_dir", config=config, num_runs=3, agent_concurrency=None
    )
    assert isinstance(plan.candidates, AgentRun)
    options = plan.candidates.options
    assert (options.agent, options.num_runs) == ("agent_dir", 3)
    assert options.tool_arg_rules is not None  # the trajectory criterion's args_match
    assert options.concurrency == type(options).concurrency  # None: the default


def test_a_trace_file_of_agents_cli_is_read_once_its_answers_the_candidates(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graded-dataset.json"
    answer = {"response": {"role": "model", "parts": [{"text": "Sunny."}]}}
    prompt = {"role": "user", "parts": [{"text": "Weather?"}]}
    path.write_text(
        json.dumps({"eval_cases": [{"eval_case_id": "w", "prompt": prompt, "responses": [answer]}]})
    )
    plan = jobs.build_plan(str(path), metrics=["rouge_1"])
    assert isinstance(plan.cases, DatasetCases)
    assert isinstance(plan.candidates, Recorded)
    (conversation,) = plan.candidates.traces
    assert isinstance(conversation, Conversation) and conversation.id == "w"


def test_platform_eval_evaluate_is_the_planned_evaluation(sync_client: Client) -> None:
    with pytest.raises(jobs.ThresholdError):
        platform_eval.evaluate(
            sync_client, str(EVALSET), traces=[TRACES], metrics=["rouge_1"], thresholds={"x": 1}
        )
    assert list(sync_client.list_items()) == []  # refused before anything was uploaded
    evaluation = platform_eval.evaluate(
        sync_client, str(EVALSET), traces=[TRACES], metrics=["rouge_1"]
    )
    assert evaluation.run is not None and evaluation.results


def test_the_command_line_says_the_plans_refusal_with_its_flags(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["-q", "run", str(EVALSET), "--traces", str(TRACES), "--metrics", "rouge_1"]
    assert main([*argv, "--threshold", "bleu=0.5"]) == 2
    said = capsys.readouterr().err
    assert "--threshold bleu=0.5: no metric 'bleu' in this run" in said
    (work / "config.json").write_text(json.dumps({"criteria": {"rouge_1": 3}}))
    assert main([*argv[:-2], "--config", "config.json"]) == 2
    assert "config.json: criteria.rouge_1.threshold:" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (
            {"inference_configs": {"agent": {"model": "m"}}, "traces": [TRACES]},
            "inference_configs=['agent'] has the target produce the responses: it goes without "
            "traces",
        ),
        (
            {"inference_configs": {"agent": {"model": "m"}}, "agent": "agent_dir"},
            "goes without agent",
        ),
        ({"num_runs": 3}, "num_runs=3 needs an agent to run"),
        ({"agent_mode": "live"}, "agent_mode='live' needs an agent to run"),
        ({"mock_tools": "golden"}, "mock_tools='golden' needs an agent to run"),
    ],
    ids=["inference-and-traces", "inference-and-agent", "runs", "live", "mocks"],
)
def test_what_contradicts_itself_is_refused_from_python_as_the_command_line_refuses_it(
    options: dict[str, Any], said: str
) -> None:
    with pytest.raises(jobs.PlanError) as refused:
        jobs.build_plan(str(EVALSET), metrics=["rouge_1"], **options)
    assert said in str(refused.value)


@pytest.mark.parametrize(
    ("agent", "options", "said"),
    [
        (
            "http://127.0.0.1:9/.well-known/agent-card.json",
            {"agent_mode": "live"},
            "agent_mode='live': http://127.0.0.1:9/.well-known/agent-card.json is an A2A peer",
        ),
        (
            "projects/p/locations/us-central1/reasoningEngines/1",
            {"agent_mode": "live"},
            "is an Agent Runtime, which has no live stream here",
        ),
        (
            "http://127.0.0.1:9",
            {"mock_tools": "golden"},
            "mock_tools='golden': http://127.0.0.1:9 is a served agent, which runs its tools",
        ),
        (
            "http://127.0.0.1:9",
            {"save_traces": "t"},
            "save_traces='t': the spans of http://127.0.0.1:9 are recorded on its server",
        ),
        (
            "http://127.0.0.1:9/.well-known/agent-card.json",
            {"mock_tools": "golden"},
            "is an A2A peer, which runs its tools on its server",
        ),
    ],
    ids=["live-a2a", "live-runtime", "mocks-served", "spans-served", "mocks-a2a"],
)
def test_what_the_agents_place_cannot_do_is_refused_by_the_plan_before_anything_connects(
    agent: str, options: dict[str, Any], said: str
) -> None:
    """Nothing listens at these addresses: the plan refuses from what the agent names."""
    with pytest.raises(jobs.PlanError) as refused:
        jobs.build_plan(str(EVALSET), metrics=["rouge_1"], agent=agent, **options)
    assert said in str(refused.value), refused.value


def test_every_place_an_agent_lives_is_recognised_in_one_place() -> None:
    from platform_eval.agents import LoadedAgent, open_agent
    from platform_eval.agents.a2a import A2APeerSource
    from platform_eval.agents.agent_runtime import AgentRuntimeSource
    from platform_eval.agents.in_process import InProcessSource
    from platform_eval.agents.remote import ServedAgent
    from platform_eval.agents.served import ApiServerSource

    loaded = LoadedAgent(object(), None, "a", "a", "f")
    found = {
        "agent_dir": InProcessSource,
        "agents/agent.py": InProcessSource,
        "pkg.module:root_agent": InProcessSource,
        "https://peer.example/.well-known/agent-card.json": A2APeerSource,
        "https://agent.example": ApiServerSource,
        "projects/p/locations/europe-west4/reasoningEngines/7": AgentRuntimeSource,
        "https://europe-west4-aiplatform.googleapis.com/v1beta1/projects/p/locations/"
        "europe-west4/reasoningEngines/7": AgentRuntimeSource,
    }
    for spec, kind in found.items():
        assert type(open_agent(spec)) is kind, spec
    assert type(open_agent(loaded)) is InProcessSource
    assert type(open_agent(ServedAgent("http://127.0.0.1:9"))) is ApiServerSource
    source = open_agent("agent_dir")
    assert open_agent(source) is source
    # What each can do, said once, where the plan reads it.
    assert InProcessSource.capabilities.live and InProcessSource.capabilities.mock_tools
    assert not A2APeerSource.capabilities.live and A2APeerSource.capabilities.spans
    assert not ApiServerSource.capabilities.mock_tools and ApiServerSource.capabilities.live
    assert not AgentRuntimeSource.capabilities.live
