"""The ``platform_eval`` fixture, as a user's test suite would use it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from platform_eval.pytest_plugin import PlatformEval
from platform_eval.results import ThresholdError

DATA = Path(__file__).resolve().parents[1] / "samples" / "data"


def test_the_sample_passes_its_config(platform_eval: PlatformEval) -> None:
    results = platform_eval.evaluate(
        DATA / "weather.evalset.json",
        traces=[DATA / "weather_traces.otlp.json"],
        config=DATA / "eval_config.json",
    )
    results.assert_passed()
    assert results.thresholds["tool_trajectory_avg_score"] == 1.0


def test_a_failure_lists_cases_metrics_and_verdicts(platform_eval: PlatformEval) -> None:
    results = platform_eval.evaluate(
        DATA / "weather.evalset.json",
        traces=[DATA / "weather_traces.otlp.json"],
        metrics=["response_match_score", "rubric_based_final_response_quality_v1"],
        thresholds={"response_match_score": 0.99},
    )
    with pytest.raises(ThresholdError) as caught:
        results.assert_passed()
    message = str(caught.value)
    assert "paris-then-oslo [agent] response_match_score: 0.963 < 0.99" in message


def test_a_judged_metric_with_no_judge_is_refused_before_anything_is_uploaded(
    platform_eval: PlatformEval,
) -> None:
    uploaded = len(list(platform_eval.client.list_items()))
    with pytest.raises(ValueError, match="'final_response_match_v2' is judged by a model"):
        platform_eval.evaluate(
            DATA / "weather.evalset.json",
            traces=[DATA / "weather_traces.otlp.json"],
            metrics=["final_response_match_v2"],
        )
    assert len(list(platform_eval.client.list_items())) == uploaded


def test_the_plugin_grades_an_agents_cli_trace_file_as_it_is(
    platform_eval: Any, tmp_path: Path
) -> None:
    """A dataset holding the agent's answers (what `eval generate` writes) needs no traces."""
    answer = {"role": "model", "parts": [{"text": "Paris is the capital."}]}
    trace_file = tmp_path / "traces_1.json"
    trace_file.write_text(
        json.dumps(
            {
                "eval_cases": [
                    {
                        "eval_case_id": "capital",
                        "prompt": {"role": "user", "parts": [{"text": "Capital of France?"}]},
                        "reference": {"response": answer},
                        "responses": [{"response": answer}],
                    }
                ]
            }
        )
    )
    results = platform_eval.evaluate(trace_file, metrics=["exact_match"])
    assert [(r.eval_case_id, r.score) for r in results.rows] == [("capital", 1.0)]


def test_a_config_naming_a_judge_model_is_judged_by_that_model(
    platform_eval: PlatformEval, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `platform-eval run --config` judges with the config's judge_model, so does the
    fixture, though the session's emulator was started with no judge."""
    pytest.importorskip("google.genai")
    from fake_gemini import adk_judge_rule, fake_gemini

    config = tmp_path / "judged_config.json"
    config.write_text(
        json.dumps(
            {
                "criteria": {
                    "final_response_match_v2": {
                        "threshold": 0.0,
                        "judge_model_options": {"judge_model": "gemini-plugin-judge"},
                    }
                }
            }
        )
    )
    with fake_gemini(adk_judge_rule) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        results = platform_eval.evaluate(
            DATA / "weather.evalset.json",
            traces=[DATA / "weather_traces.otlp.json"],
            config=config,
        )
    judged = [row for row in results.rows if row.metric == "final_response_match_v2"]
    assert judged and all(row.score is not None for row in judged)
    assert fake.seen and {seen.model for seen in fake.seen} == {"gemini-plugin-judge"}
