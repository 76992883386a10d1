"""Every file of the shared corpus: its kind, and counts before and after conversion."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from corpus_files import EVAL_SETS, KINDS, NOT_ADK

from platform_eval import formats, metrics
from platform_eval.formats import Kind
from platform_eval.types import request_mode_problem

pytestmark = pytest.mark.corpus


def _corpus_files() -> list[str]:
    # Trace files are the trace readers' to cover (tests/traces/test_traces_wild.py).
    return sorted(
        str(p.relative_to(CORPUS))
        for p in CORPUS.glob("*/*")
        if p.name != "README.md" and p.is_file() and p.parent.name != "traces"
    )


def test_every_corpus_file_is_listed_here() -> None:
    assert _corpus_files() == sorted(KINDS)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_kind_is_detected(name: str) -> None:
    assert formats.load(CORPUS / name).kind == KINDS[name]


def _raw_counts(name: str) -> tuple[int, int, int]:
    """(cases, invocations, tool calls) counted straight from the JSON, not through our models."""
    data: Any = json.loads((CORPUS / name).read_text())
    kind = KINDS[name]
    if kind == Kind.LEGACY_TEST:
        return 1, len(data), sum(len(row.get("expected_tool_use", [])) for row in data)
    if kind == Kind.LEGACY_EVAL_SET:
        rows = [row for case in data for row in case["data"]]
        return len(data), len(rows), sum(len(r.get("expected_tool_use", [])) for r in rows)
    invocations = calls = 0
    for case in data["eval_cases"]:
        for invocation in case.get("conversation") or []:
            invocations += 1
            intermediate = invocation.get("intermediate_data") or {}
            calls += len(intermediate.get("tool_uses") or [])
            for event in intermediate.get("invocation_events") or []:
                parts = (event.get("content") or {}).get("parts") or []
                calls += sum(1 for p in parts if p.get("function_call"))
    return len(data["eval_cases"]), invocations, calls


@pytest.mark.parametrize("name", EVAL_SETS)
def test_eval_sets_load_and_convert_without_losing_turns_or_tool_calls(name: str) -> None:
    assert formats.validate(CORPUS / name) == []
    eval_set = formats.load_eval_set(CORPUS / name)
    cases, invocations, calls = _raw_counts(name)
    assert len(eval_set.eval_cases) == cases
    assert sum(len(c.conversation or []) for c in eval_set.eval_cases) == invocations
    assert (
        sum(len(i.tool_calls()) for c in eval_set.eval_cases for i in c.conversation or []) == calls
    )

    items, report = formats.eval_set_to_items(eval_set)
    assert len(items) == cases and len(report.cases) == cases
    golden_turns = golden_calls = 0
    for item in items:
        assert item.labels and item.labels["eval-set-id"]
        request = item.evaluation_request
        assert request is not None and request_mode_problem(request) is None
        golden = request.golden_response
        if golden is None:  # a conversation scenario
            assert request.prompt is not None and request.prompt.user_scenario is not None
            continue
        for turn in golden.agent_data.turns:  # type: ignore[union-attr]
            golden_turns += 1
            golden_calls += sum(
                1
                for e in turn.events or []
                for p in (e.content.parts or [])
                if p.function_call  # type: ignore[union-attr]
            )
    assert golden_turns == invocations
    assert golden_calls == calls


@pytest.mark.parametrize("name", EVAL_SETS)
def test_adk_accepts_what_we_write_back(name: str) -> None:
    adk_eval_set = pytest.importorskip("google.adk.evaluation.eval_set")
    ours = formats.load_eval_set(CORPUS / name)
    theirs = adk_eval_set.EvalSet.model_validate(ours.to_json_dict())
    assert len(theirs.eval_cases) == len(ours.eval_cases)


@pytest.mark.parametrize("name", sorted(NOT_ADK))
def test_non_adk_files_get_every_problem_with_a_hint(name: str) -> None:
    problems = formats.validate(CORPUS / name)
    data = json.loads((CORPUS / name).read_text())
    cases = len(data["eval_cases"])
    # One missing eval_id per case, and one unknown agent_content per invocation: all at once.
    missing = [p for p in problems if p.path.endswith(".eval_id")]
    assert len(missing) == cases
    hints = [p for p in problems if "did you mean 'final_response'" in p.message]
    assert len(hints) == sum(len(c["conversation"]) for c in data["eval_cases"])
    assert all(p.file == str(CORPUS / name) for p in problems)
    with pytest.raises(formats.FormatError) as caught:
        formats.load_eval_set(CORPUS / name)
    assert "$.eval_cases[0].eval_id: required field is missing" in str(caught.value)


@pytest.mark.parametrize("name", [n for n, k in sorted(KINDS.items()) if k == Kind.EVAL_CONFIG])
def test_every_config_loads(name: str) -> None:
    config = formats.load_eval_config(CORPUS / name)
    raw = formats.read_data(CORPUS / name)
    assert set(config.criteria) == set(raw.get("criteria") or raw.get("metrics_to_run") or [])


def test_config_criteria_and_run_metrics() -> None:
    config = formats.load_eval_config(
        CORPUS / "adk/LiuYuWei__google_adk_evaluation_example__weather_agent__test_config.json"
    )
    assert config.thresholds()["tool_trajectory_avg_score"] == 1.0
    assert config.criteria["response_match_score"].threshold == 0.0
    rubric_metric = config.criteria["rubric_based_final_response_quality_v1"]
    assert [r["rubric_id"] for r in rubric_metric.rubrics] == ["conciseness", "intent_inference"]
    camel = formats.load_eval_config(
        CORPUS
        / "adk/GoogleCloudPlatform__agent-starter-pack__agent_starter_pack__agents__adk__tests__eval__eval_config.json"
    )
    options = camel.criteria["rubric_based_final_response_quality_v1"].options
    assert options["judge_model_options"] == {
        "judge_model": "gemini-3-flash-preview",
        "num_samples": 1,
    }
    assert options["rubrics"][0]["rubric_content"]["text_property"].startswith(
        "The response directly"
    )
    # ADK's judged criterion travels whole, for google-adk's evaluator to read every field.
    (metric,) = camel.run_metrics()
    carried = metric.to_wire()["computationBasedMetricSpec"]["parameters"]["criterion"]
    assert carried["judge_model_options"] == options["judge_model_options"]
    assert carried["rubrics"] == options["rubrics"]
    spec = metrics.resolve(metric)
    assert spec.rubrics[0].rubric_id == "relevance"
    assert spec.rubrics[0].description == options["rubrics"][0]["rubric_content"]["text_property"]


def test_config_problems_are_all_reported(tmp_path: Path) -> None:
    path = tmp_path / "bad_config.json"
    path.write_text(
        json.dumps(
            {
                "criteria": {"a": "high", "b": {"threshold": "x", "match_type": "SOMETIMES"}},
                "critera": {},
            }
        )
    )
    problems = formats.validate(path)
    assert [p.path for p in problems] == [
        "$.criteria.a",
        "$.criteria.b.threshold",
        "$.criteria.b.match_type",
        "$.critera",
    ]


def test_dataset_file_loads() -> None:
    dataset = formats.load_dataset(CORPUS / "agents-cli/basic-dataset.json")
    assert [c.eval_case_id for c in dataset.eval_cases] == [
        "greeting",
        "weather_query",
        "capital_lookup",
    ]
    assert (
        dataset.eval_cases[2].reference.response.parts[0].text == "The capital of France is Paris."
    )  # type: ignore[union-attr,index]
