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
