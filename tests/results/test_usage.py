"""The agent's cost and latency: a session's usage read as ADK records it, prices matched by
model, percentiles, and the bounds that fail a run (never passing what was not computed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from platform_eval.agents.usage import session_usage
from platform_eval.results import RunResults
from platform_eval.results.model import Row
from platform_eval.results.usage import PRICES, load_prices, percentile, price_of
from platform_eval.types import EvaluationRun

SESSION = {
    "events": [
        {"author": "user", "invocationId": "i1", "timestamp": 100.0},
        {
            "author": "a",
            "invocationId": "i1",
            "timestamp": 101.5,
            "modelVersion": "gemini-2.5-flash-001",
            "usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 100},
        },
        {"author": "user", "invocationId": "i2", "timestamp": 200.0},
        {
            "author": "a",
            "invocationId": "i2",
            "timestamp": 200.5,
            "modelVersion": "gemini-2.5-flash-001",
            "usageMetadata": {
                "promptTokenCount": 2000,
                "candidatesTokenCount": 50,
                "thoughtsTokenCount": 50,
            },
        },
        {"author": "a", "invocationId": "i2", "partial": True, "usageMetadata": {}},
    ]
}


def test_a_sessions_usage_is_its_model_answers_and_its_turns_times() -> None:
    usage = session_usage(SESSION)
    assert (usage["modelCalls"], usage["promptTokens"], usage["outputTokens"]) == (2, 3000, 150)
    assert usage["thinkingTokens"] == 50 and usage["turnSeconds"] == [1.5, 0.5]
    assert usage["seconds"] == 2.0
    assert set(usage["byModel"]) == {"gemini-2.5-flash-001"}


def test_a_model_is_priced_by_its_own_entry_or_the_longest_it_begins_with(tmp_path: Path) -> None:
    assert price_of("models/gemini-2.5-flash-lite-001", PRICES) == PRICES["gemini-2.5-flash-lite"]
    assert price_of("gemini-2.5-flash-001", PRICES) == PRICES["gemini-2.5-flash"]
    assert price_of("claude-x", PRICES) is None
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"claude-x": {"input": 3, "output": 15}}))
    assert load_prices(path)["claude-x"] == (3.0, 15.0)
    path.write_text(json.dumps({"claude-x": {"input": -1, "output": 15}}))
    with pytest.raises(ValueError, match=r"\$\.claude-x"):
        load_prices(path)


def test_percentiles_are_linear_between_ranks() -> None:
    assert percentile([1.0], 0.95) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([0.0, 10.0], 0.95) == pytest.approx(9.5)


def _results(model: str = "gemini-2.5-flash-001") -> RunResults:
    run = EvaluationRun.model_validate(
        {
            "name": "projects/p/locations/l/evaluationRuns/1",
            "metadata": {
                "platformEval": {
                    "agentUsage": {"c": {"agent": session_usage(json.loads(json.dumps(SESSION)))}}
                }
            },
        }
    )
    if model != "gemini-2.5-flash-001":
        raw = run.metadata["platformEval"]["agentUsage"]["c"]["agent"]
        raw["byModel"] = {model: raw["byModel"].pop("gemini-2.5-flash-001")}
    run.state = "SUCCEEDED"  # type: ignore[assignment]
    from platform_eval.results.model import build

    results = build(run, [])
    rows = [Row("c", "i", None, "agent", "exact_match", 1.0, 0.5, "e", ())]
    import dataclasses

    return dataclasses.replace(results, rows=rows)


def test_cost_and_latency_bounds_fail_a_run_and_what_cannot_be_computed_never_passes() -> None:
    results = _results()
    spent = results.usage()
    assert spent is not None
    cost = (3000 * 0.30 + 200 * 2.50) / 1e6
    assert spent.value("cost_per_case_usd") == pytest.approx(cost)
    assert results.with_thresholds({"cost_per_case_usd": 1.0, "latency_p95_s": 2.0}).passed
    over = results.with_thresholds({"latency_p95_s": 1.0})
    assert not over.passed and "latency_p95_s: 2 > 1" in over.failure_message()
    unpriced = _results("claude-x").with_thresholds({"cost_per_case_usd": 1.0})
    assert not unpriced.passed
    assert "no price for claude-x (--prices FILE)" in unpriced.failure_message()
    document = json.loads(results.to_json())["agentUsage"]
    assert document["cost_per_case_usd"] == pytest.approx(cost)
    assert document["perCase"][0]["turnSeconds"] == [1.5, 0.5]


def test_compare_sets_the_agents_cost_and_latency_side_by_side_with_a_trade_off() -> None:
    from platform_eval.results import compare

    before = _results()
    after = _results()
    cheaper = after.agent_usage[("c", "agent")]
    cheaper["byModel"] = {"gemini-2.5-flash-lite": cheaper["byModel"]["gemini-2.5-flash-001"]}
    comparison = compare(before, after)
    text = comparison.to_table()
    assert "agent cost_per_case_usd: " in text and "(-73%)" in text
    assert "trade-off: same quality, 73% cheaper" in text
    document = json.loads(comparison.to_json())["agentUsage"]
    assert document["after"]["cost_per_case_usd"] < document["before"]["cost_per_case_usd"]
