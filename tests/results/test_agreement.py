"""Is the judge right? Its verdicts beside people's labels: the figures are the textbook ones
(scikit-learn's kappa, Krippendorff's own worked example), the labels file is checked as every
input is, and the CLI gates on --min-kappa."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from platform_eval.cli import main
from platform_eval.formats import FormatError
from platform_eval.results import Row, RunResults, Verdict
from platform_eval.results.agreement import (
    Label,
    agreement,
    cohen_kappa,
    krippendorff_alpha,
    read_labels,
)


def _sixty() -> tuple[list[bool], list[bool]]:
    """60 verdicts, the people and the judge agreeing on most: 22 both PASS, 26 both FAIL, 7
    judge PASS / people FAIL, 5 judge FAIL / people PASS."""
    cells = [(True, True)] * 22 + [(False, False)] * 26 + [(True, False)] * 7 + [(False, True)] * 5
    random.Random(3).shuffle(cells)
    return [j for j, _ in cells], [p for _, p in cells]


def test_kappa_is_scikit_learns_and_the_hand_computed_one() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    judge, people = _sixty()
    # By hand: observed 48/60 = 0.8; the judge says PASS 29 times, the people 27 times;
    # expected (29*27 + 31*33) / 3600 = 1806/3600; kappa = (0.8 - 0.50167) / (1 - 0.50167).
    by_hand = (48 / 60 - 1806 / 3600) / (1 - 1806 / 3600)
    assert cohen_kappa(judge, people) == pytest.approx(by_hand)
    assert cohen_kappa(judge, people) == pytest.approx(metrics.cohen_kappa_score(judge, people))
    assert cohen_kappa([True] * 5, [True] * 5) is None  # one label throughout: undefined


def test_krippendorffs_alpha_is_his_worked_example() -> None:
    """Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the nominal example:
    four observers, twelve units, values missing; alpha = 0.743."""
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None]
    b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3]
    c = [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None]
    d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]
    units = list(zip(a, b, c, d, strict=True))
    assert krippendorff_alpha(units) == pytest.approx(0.743, abs=0.0005)


def _results(judge: list[bool]) -> RunResults:
    rows = [
        Row(
            eval_case_id=f"case-{n}",
            item=f"items/{n}",
            request=None,
            candidate="agent",
            metric="rubric_based_final_response_quality_v1",
            score=1.0 if verdict else 0.0,
            threshold=0.5,
            explanation="judged",
            verdicts=(Verdict("polite", "It is polite.", verdict, "because"),),
        )
        for n, verdict in enumerate(judge)
    ]
    return RunResults(run=None, rows=rows)


def _labels(people: list[bool], rubric: str | None = "polite") -> list[dict[str, Any]]:
    return [
        {
            "case": f"case-{n}",
            "metric": "rubric_based_final_response_quality_v1",
            **({"rubric": rubric} if rubric else {}),
            "verdict": verdict,
        }
        for n, verdict in enumerate(people)
    ]


def test_the_report_per_rubric_and_metric_with_an_interval_and_the_disagreements() -> None:
    judge, people = _sixty()
    results = _results(judge)
    labels = [Label(**label) for label in _labels(people) + _labels(people, rubric=None)]
    report = agreement(results, labels)
    rubric, metric = sorted(report.groups, key=lambda g: g.rubric or "")[::-1]
    assert rubric.rubric == "polite" and metric.rubric is None
    for group in (rubric, metric):
        assert group.accuracy == pytest.approx(0.8)
        assert group.kappa == pytest.approx(cohen_kappa(judge, people))
        assert group.confusion == {
            "judge PASS / people PASS": 22,
            "judge PASS / people FAIL": 7,
            "judge FAIL / people PASS": 5,
            "judge FAIL / people FAIL": 26,
        }
        assert len(group.disagreements) == 12
        assert group.interval is not None
        low, high = group.interval
        assert low < group.kappa < high  # type: ignore[operator]
    assert report.overall.kappa == pytest.approx(cohen_kappa(judge * 2, people * 2))
    assert report.failures(0.5) == [] and len(report.failures(0.7)) == 3
    document = json.loads(report.to_json())
    assert document["overall"]["verdicts"] == 120 and document["unmatched"] == []


def test_several_raters_give_krippendorffs_alpha_and_a_tie_is_not_a_verdict() -> None:
    results = _results([True, True, False, False])
    labels = [
        Label("case-0", "rubric_based_final_response_quality_v1", True, "polite", "ada"),
        Label("case-0", "rubric_based_final_response_quality_v1", True, "polite", "bo"),
        Label("case-1", "rubric_based_final_response_quality_v1", True, "polite", "ada"),
        Label("case-1", "rubric_based_final_response_quality_v1", False, "polite", "bo"),
        Label("case-2", "rubric_based_final_response_quality_v1", False, "polite", "ada"),
        Label("case-2", "rubric_based_final_response_quality_v1", False, "polite", "bo"),
        Label("case-3", "rubric_based_final_response_quality_v1", True, "polite", "ada"),
        Label("case-3", "rubric_based_final_response_quality_v1", True, "polite", "bo"),
    ]
    (group,) = agreement(results, labels).groups
    assert len(group.decided) == 3  # case-1's raters split: no people's verdict there
    assert group.accuracy == pytest.approx(2 / 3)
    expected = krippendorff_alpha(
        [(True, True, True), (True, True, False), (False, False, False), (False, True, True)]
    )
    assert group.alpha == pytest.approx(expected)


def test_labels_of_nothing_judged_are_said_not_dropped() -> None:
    results = _results([True])
    labels = [
        Label("case-0", "rubric_based_final_response_quality_v1", True, "polite"),
        Label("case-9", "rubric_based_final_response_quality_v1", True, "polite"),
        Label("case-0", "rubric_based_final_response_quality_v1", True, "concise"),
        Label("case-0", "rubric_based_final_response_quality_v1", None, "polite"),
    ]
    report = agreement(results, labels)
    assert list(report.unmatched) == [
        "case-9 rubric_based_final_response_quality_v1 / polite: the run has no result of this "
        "case and metric",
        "case-0 rubric_based_final_response_quality_v1 / concise: the judge gave no rubric "
        "verdict here",
        "1 labels have no verdict yet (null): not counted",
    ]


def test_a_labels_file_with_mistakes_names_each(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"case": "a", "metric": "m", "verdict": "yes"}\n'
        "not json\n"
        '{"case": "a", "metric": "m", "verdict": true, "rubirc": "x"}\n'
    )
    with pytest.raises(FormatError) as raised:
        read_labels(path)
    said = [str(p) for p in raised.value.problems]
    assert said[0].endswith(
        "line 1: verdict: expected true (it passes), false (it fails) or null (not labelled yet)"
    )
    assert "line 2: not JSON" in said[1]
    assert "line 3: rubirc: unknown field" in said[2]


@pytest.mark.parametrize("depth", [150, 50_000], ids=["past-the-limit", "past-python's-stack"])
def test_a_labels_line_nested_too_deep_is_named_not_an_internal_error(
    tmp_path: Path, depth: int
) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"case": "a", "metric": "m", "verdict": true}\n'
        + '{"note":' * depth
        + "1"
        + "}" * depth
        + "\n"
    )
    with pytest.raises(FormatError) as raised:
        read_labels(path)
    [problem] = [str(p) for p in raised.value.problems]
    assert "line 2" in problem and "nested more than 100 levels deep" in problem


def test_the_cli_reports_and_gates_on_min_kappa_and_writes_a_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run on the emulator whose rubric judge (the local typed one) gives verdicts; people
    label them: the template the CLI writes, filled in."""
    monkeypatch.chdir(tmp_path)
    from platform_eval.target import connect

    rubric = {
        "rubricId": "paris",
        "content": {"property": {"description": "Paris"}},
        "type": "TEXT_CONTAINS",  # the local judge decides it: no model needed
    }
    with connect() as target:  # the embedded emulator's file, which the commands read too
        client = target.client
        items = [
            client.create_item(
                {
                    "displayName": f"case-{n}",
                    "metadata": {"evalCaseId": f"case-{n}"},
                    "evaluationItemType": "REQUEST",
                    "evaluationRequest": {
                        "prompt": {"text": "Weather in Paris?"},
                        "candidateResponses": [
                            {"candidate": "agent", "text": "Sunny in Paris." if n % 2 else "Rain."}
                        ],
                        "rubrics": {"g": {"rubrics": [rubric]}},
                    },
                }
            )
            for n in range(6)
        ]
        evaluation_set = client.create_set(display_name="s", items=items)
        created = client.create_run(
            evaluation_set=evaluation_set, metrics=["rubric_based_final_response_quality_v1"]
        )
        run = str(client.wait_for_run(created, poll_interval=0.05, timeout=30).name)

    assert main(["-q", "judges", "labels", run, "-o", "labels.jsonl"]) == 0
    template = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert len(template) == 6 and all(
        t["verdict"] is None and t["rubric"] == "paris" for t in template
    )
    # People agree with the judge on all but case-0 (they say its "Rain." passes).
    for line in template:
        line["verdict"] = line["case"] in ("case-0", "case-1", "case-3", "case-5")
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(t) + "\n" for t in template))

    assert (
        main(["-q", "judges", "agreement", run, "--labels", "labels.jsonl", "--format", "json"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    overall = report["overall"]
    assert overall["verdicts"] == 6 and overall["accuracy"] == pytest.approx(5 / 6)
    judge = [n % 2 == 1 for n in range(6)]
    people = [n in (0, 1, 3, 5) for n in range(6)]
    assert overall["kappa"] == pytest.approx(cohen_kappa(judge, people))
    assert [d["case"] for d in overall["disagreements"]] == ["case-0"]
    gate = ["-q", "judges", "agreement", run, "--labels", "labels.jsonl", "--min-kappa", "0.9"]
    assert main(gate) == 1
    assert "--min-kappa: rubric_based_final_response_quality_v1 / paris: kappa 0.667 < 0.9" in (
        capsys.readouterr().err
    )


def test_the_html_report_downloads_its_verdicts_as_a_labels_file_without_a_script(
    tmp_path: Path,
) -> None:
    """The report's link is a data URI of the labels template (no script in the page); the file
    it downloads, filled in, is what `judges agreement` reads."""
    from urllib.parse import unquote

    from platform_eval.results.agreement import label_template

    judge, people = _sixty()
    results = _results(judge)
    page = results.to_html()
    assert "<script" not in page
    prefix = 'download="labels.jsonl" href="data:application/x-ndjson;charset=utf-8,'
    start = page.index(prefix) + len(prefix)
    downloaded = unquote(page[start : page.index('"', start)])
    assert downloaded == label_template(results)
    assert "Download its 60 verdicts as a labels file" in page
    filled = [
        {**json.loads(line), "verdict": said}
        for line, said in zip(downloaded.splitlines(), people, strict=True)
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in filled))
    (group,) = agreement(results, read_labels(path)).groups
    assert group.kappa == pytest.approx(cohen_kappa(judge, people))
    # Nothing judged, no link.
    plain = RunResults(run=None, rows=[])
    assert "labels.jsonl" not in plain.to_html()
