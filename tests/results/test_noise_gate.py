"""The noise-aware regression gate: per metric a paired delta over cases, a bootstrap
interval, a permutation p-value and McNemar's test, and --fail-on-regression failing only on
a drop that is more than noise. Runs are real runs on the emulator; the seed is fixed."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from platform_eval.cli import main
from platform_eval.results import RunResults, compare, merge_runs
from platform_eval.results.model import Row
from platform_eval.results.significance import assess, mcnemar_p, permutation_p
from platform_eval.target import connect
from platform_eval.types import EvaluationRun

WORDS = [f"word{i}" for i in range(10)]


def _text(wrong: int) -> str:
    """Ten words of which ``wrong`` differ from the golden answer: ROUGE-1 (10 - wrong) / 10."""
    return " ".join(WORDS[: 10 - wrong] + [f"other{i}" for i in range(wrong)])


def _run(target: Any, name: str, wrong: list[int]) -> str:
    client = target.client
    items = [
        client.create_item(
            {
                "displayName": f"case_{index:02d}",
                "evaluationItemType": "REQUEST",
                "evaluationRequest": {
                    "prompt": {"text": f"question {index}"},
                    "goldenResponse": {"text": _text(0)},
                    "candidateResponses": [{"candidate": "agent", "text": _text(k)}],
                },
            }
        )
        for index, k in enumerate(wrong)
    ]
    run = client.create_run(
        evaluation_set=client.create_set(display_name=name, items=items), metrics=["rouge_1"]
    )
    done = client.wait_for_run(run, poll_interval=0.05)
    assert done.state == "SUCCEEDED"
    assert done.name is not None
    return done.name


@pytest.fixture
def runs(work: Path) -> dict[str, str]:
    rng = random.Random(7)
    base = [rng.choice([1, 2, 3]) for _ in range(40)]
    # Noise both ways: half the cases one word better, half one word worse.
    signs = [1, -1] * 20
    rng.shuffle(signs)
    noisy = [k + s for k, s in zip(base, signs, strict=True)]
    worse = list(base)
    for index in rng.sample(range(40), 15):
        worse[index] = base[index] + 4
    with connect() as target:
        return {
            "base": _run(target, "base", base),
            "noisy": _run(target, "noisy", noisy),
            "worse": _run(target, "worse", worse),
        }


def test_noise_in_both_directions_is_not_a_regression(
    runs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["-q", "compare", runs["base"], runs["noisy"], "--fail-on-regression", "--format", "json"]
    )
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    rouge = document["metrics"]["rouge_1"]
    assert rouge["cases"] == 40 and rouge["delta"] == pytest.approx(0.0, abs=1e-12)
    assert rouge["pValue"] > 0.5 and rouge["verdict"] in ("within noise", "unchanged")
    low, high = rouge["ci95"]
    assert low < 0 < high
    assert document["regressedMetrics"] == []


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
def test_fifteen_worse_cases_of_forty_are_a_regression(
    runs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["-q", "compare", runs["base"], runs["worse"], "--fail-on-regression", "--format", "json"]
    )
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    rouge = document["metrics"]["rouge_1"]
    assert rouge["pValue"] < 0.05 and rouge["regressed"] and rouge["verdict"] == "regressed"
    assert rouge["delta"] == pytest.approx(-15 * 0.4 / 40)
    assert rouge["ci95"][1] < 0
    assert document["regressedMetrics"] == ["rouge_1"]
    assert len(rouge["movedMost"]) == 5 and all(
        m["after"] == pytest.approx(m["before"] - 0.4) for m in rouge["movedMost"]
    )
    # A drop smaller than --min-delta does not fail the gate; the report still says it moved.
    assert (
        main(
            [
                "-q",
                "compare",
                runs["base"],
                runs["worse"],
                "--fail-on-regression",
                "--min-delta",
                "0.2",
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert "rouge_1" in table and "within noise" in table and "[-0." in table


@pytest.mark.slow
def test_the_same_inputs_give_the_same_interval(
    runs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = []
    for _ in range(2):
        main(["-q", "compare", runs["base"], runs["noisy"], "--format", "json", "--seed", "11"])
        outputs.append(json.loads(capsys.readouterr().out)["metrics"]["rouge_1"]["ci95"])
    assert outputs[0] == outputs[1]
    for fmt, expect in (
        ("markdown", "| 95% CI (paired) | p | verdict |"),
        ("html", "95% CI (paired bootstrap over cases)"),
    ):
        main(["-q", "compare", runs["base"], runs["worse"], "--format", fmt])
        out = capsys.readouterr().out
        assert expect in out and "regressed" in out


@pytest.mark.slow
def test_several_runs_a_side_use_each_cases_mean_and_spread(
    runs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = f"{runs['base']},{runs['noisy']}"
    code = main(
        [
            "-q",
            "compare",
            before,
            f"{runs['worse']},{runs['worse']}",
            "--fail-on-regression",
            "--format",
            "json",
        ]
    )
    document = json.loads(capsys.readouterr().out)
    assert code == 1 and document["metrics"]["rouge_1"]["cases"] == 40


# -- the statistics, by hand -----------------------------------------------------------------


def test_the_exact_permutation_p_value_by_hand() -> None:
    # Three cases all worse by 0.1: of the 8 sign assignments, 2 are as extreme (all - or all +).
    assert permutation_p([-0.1, -0.1, -0.1], random.Random(1)) == pytest.approx(2 / 8)
    assert permutation_p([0.0, 0.0], random.Random(1)) == 1.0
    # One case cannot be told from noise.
    assert permutation_p([-0.9], random.Random(1)) == 1.0


def test_mcnemar_by_hand() -> None:
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(6, 0) == pytest.approx(2 * 0.5**6)
    assert mcnemar_p(3, 3) == 1.0


def test_a_threshold_adds_mcnemar_on_the_cases_that_flipped() -> None:
    before = {f"c{i}": [0.9] for i in range(10)}
    after = {f"c{i}": [0.5 if i < 8 else 0.9] for i in range(10)}
    test = assess("m", before, after, threshold=0.8)
    assert test.mcnemar_p == pytest.approx(2 * 0.5**8)
    assert test.regressed and test.p_value is not None and test.p_value < 0.05


def test_lower_is_better_metrics_regress_upwards() -> None:
    before = {f"c{i}": [0.1] for i in range(10)}
    after = {f"c{i}": [0.6] for i in range(10)}
    assert assess("m", before, after, higher_is_better=False).regressed
    assert not assess("m", before, after, higher_is_better=True).regressed


def _results(name: str, rows: list[tuple[str, str, float]]) -> RunResults:
    run = EvaluationRun.model_validate({"name": name, "state": "SUCCEEDED"})
    return RunResults(
        run,
        [Row(case, "", None, candidate, "m", score, None, None) for case, candidate, score in rows],
    )


def test_python_compare_and_merged_runs() -> None:
    one = _results("a", [(f"c{i}", "agent", 0.8) for i in range(12)])
    two = _results("b", [(f"c{i}", "agent", 0.2) for i in range(12)])
    comparison = one.compare(two)
    assert comparison.tests["m"].regressed and comparison.regressed_metrics
    merged = merge_runs([one, two])
    assert {r.candidate for r in merged.rows} == {"agent@1", "agent@2"}
    spread = compare(merged, merge_runs([two, two])).tests["m"]
    # Each case: before the mean of 0.8 and 0.2; after 0.2 twice.
    assert spread.delta == pytest.approx(-0.3) and spread.ci95 is not None
    assert spread.ci95[0] < -0.3 < spread.ci95[1]  # the runs' spread widens the interval


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_three_cases_that_all_regress_fail_the_gate_by_the_any_drop_rule(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """2/2^3 = 0.25: no permutation test on 3 cases reaches alpha 0.05; the stated fallback
    rule decides, and the output says which rule and on how many cases."""
    with connect() as target:
        before, after = _run(target, "before", [0, 1, 0]), _run(target, "after", [6, 9, 8])
    code = main(["-q", "compare", before, after, "--fail-on-regression"])
    table = capsys.readouterr().out
    assert code == 1
    assert "regressed" in table
    assert "3 paired cases are too few for the permutation test" in table
    assert "any-drop rule" in table
    assert main(["-q", "compare", before, after, "--format", "json"]) == 0
    rouge = json.loads(capsys.readouterr().out)["metrics"]["rouge_1"]
    assert (rouge["rule"], rouge["cases"], rouge["regressed"]) == ("any drop", 3, True)
    # An improvement on few cases is no regression; nor is a drop within --min-delta.
    assert main(["-q", "compare", after, before, "--fail-on-regression"]) == 0
    capsys.readouterr()
    assert main(["-q", "compare", before, after, "--fail-on-regression", "--min-delta", "0.9"]) == 0


def test_forty_cases_are_decided_by_significance_and_say_so(
    runs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-q", "compare", runs["base"], runs["noisy"], "--fail-on-regression"]) == 0
    assert "decided on 40 paired cases by a paired permutation test" in capsys.readouterr().out
