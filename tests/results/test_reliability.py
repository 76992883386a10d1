"""pass@k, pass^k and flaky cases of repeated runs: the unbiased estimators against a direct
count over every subset of runs, the gate they make, quarantined cases, and every format."""

from __future__ import annotations

import csv
import io
import itertools
import json
from xml.etree import ElementTree as ET

import pytest

from platform_eval.results import RunResults
from platform_eval.results.model import Row
from platform_eval.results.reliability import pass_at, pass_hat
from platform_eval.types import EvaluationRun


@pytest.mark.parametrize(("n", "c"), [(n, c) for n in range(1, 7) for c in range(n + 1)])
def test_the_estimators_are_the_share_of_k_subsets_that_pass(n: int, c: int) -> None:
    """pass@k: the share of the C(n, k) draws of k runs with a passing one; pass^k: with every
    one passing. Counted directly over every draw."""
    runs = [True] * c + [False] * (n - c)
    for k in range(1, n + 1):
        draws = list(itertools.combinations(runs, k))
        assert pass_at(n, c, k) == pytest.approx(sum(any(d) for d in draws) / len(draws))
        assert pass_hat(n, c, k) == pytest.approx(sum(all(d) for d in draws) / len(draws))


def _results(outcomes: dict[str, list[bool]], threshold: float | None = 0.5) -> RunResults:
    """A run where case -> each of its runs passed (score 1) or not (score 0)."""
    run = EvaluationRun.model_validate({"name": "projects/p/locations/l/evaluationRuns/1"})
    run.state = "SUCCEEDED"  # type: ignore[assignment]
    rows = [
        Row(case, "i", None, f"agent#{n}", "exact_match", float(ok), threshold, "e", ())
        for case, runs in outcomes.items()
        for n, ok in enumerate(runs, 1)
    ]
    return RunResults(run, rows)


OUTCOMES = {"steady": [True, True, True], "flaky": [True, False, True], "broken": [False] * 3}


def test_the_runs_figures_are_means_over_cases_and_flaky_cases_are_named() -> None:
    found = _results(OUTCOMES).reliability()
    assert found is not None and found.runs == 3
    assert found.flaky == ["flaky"]
    assert found.value("pass@1") == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert found.value("pass^3") == pytest.approx((1 + 0 + 0) / 3)
    assert found.value("pass@3") == pytest.approx(2 / 3)
    assert "1 flaky: flaky" in found.line()


def test_a_reliability_threshold_is_the_gate_and_a_single_runs_miss_is_counted_in_it() -> None:
    results = _results({"steady": [True] * 3, "flaky": [True, True, False]})
    assert not results.passed  # a run of a case missed its threshold
    judged = results.with_thresholds({"pass@1": 0.8})
    assert judged.passed  # pass@1 = (1 + 2/3) / 2 = 0.833
    strict = results.with_thresholds({"pass^3": 0.8})
    assert not strict.passed
    assert "pass^3: 0.500 < 0.8" in strict.failure_message()
    beyond = results.with_thresholds({"pass^4": 0.1})
    assert not beyond.passed  # never a pass that was not computed
    assert "cannot be computed" in beyond.failure_message()


def test_quarantined_cases_are_reported_and_fail_no_gate() -> None:
    results = _results({"steady": [True] * 2, "flaky": [True, False]})
    import dataclasses

    held = dataclasses.replace(results, quarantine=frozenset({"flaky"}))
    assert not results.passed and held.passed
    found = held.reliability()
    assert found is not None and found.quarantined == ["flaky"]
    assert held.with_thresholds({"pass^2": 1.0}).passed  # the quarantined case is not counted
    document = json.loads(held.to_json())
    assert document["reliability"]["quarantined"] == ["flaky"]


def test_one_run_per_case_or_no_threshold_has_no_reliability_to_report() -> None:
    assert _results({"a": [True], "b": [False]}).reliability() is None
    assert _results(OUTCOMES, threshold=None).reliability() is None
    unjudged = _results({"a": [True], "b": [True]}).with_thresholds({"pass^2": 0.5})
    assert not unjudged.passed and "cannot be computed" in unjudged.failure_message()


def test_every_format_reports_it() -> None:
    results = _results(OUTCOMES).with_thresholds({"pass^3": 0.3})
    document = json.loads(results.to_json())["reliability"]
    assert document["pass^3"] == pytest.approx(1 / 3) and document["flaky"] == ["flaky"]
    assert document["thresholds"] == {"pass^3": 0.3} and document["missed"] == []
    flaky = next(c for c in document["cases"] if c["evalCaseId"] == "flaky")
    assert (flaky["runs"], flaky["passed"], flaky["flaky"]) == (3, 2, True)
    assert flaky["pass@2"] == pytest.approx(1.0)
    rows = list(csv.DictReader(io.StringIO(results.to_csv())))
    assert {(r["evalCaseId"], r["caseRuns"], r["casePassed"]) for r in rows} >= {
        ("flaky", "3", "2")
    }
    suite = ET.fromstring(results.to_junit()).find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["flaky"] == "flaky" and float(properties["pass^3"]) == pytest.approx(1 / 3)
    for text in (results.to_table(), results.to_markdown(), results.to_html()):
        assert "reliability over 3 runs" in text and "flaky" in text
    assert results.passed  # pass^3 = 1/3 >= 0.3
