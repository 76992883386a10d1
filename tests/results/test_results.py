"""RunResults from real emulator runs: rows per case, thresholds, every renderer, compare."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from factories import agent_data, call, reply, request_item, user
from rich.console import Console

from platform_eval import Client
from platform_eval.cli._rich_table import print_results
from platform_eval.results import Status, ThresholdError, compare, fetch_results

RUBRICS = {
    "g": {
        "groupId": "g",
        "rubrics": [
            {
                "rubricId": "mentions-paris",
                "content": {"property": {"description": "Paris"}},
                "type": "TEXT_CONTAINS",
            }
        ],
    }
}


def _item(case: str, answer: str, city: str) -> dict[str, Any]:
    golden = agent_data(
        [user("Weather in Paris?"), call("get_weather", city="Paris"), reply("Sunny in Paris.")]
    )
    candidate = agent_data(
        [user("Weather in Paris?"), call("get_weather", city=city), reply(answer)]
    )
    return {
        "displayName": case,
        "metadata": {"evalCaseId": case},
        "evaluationItemType": "REQUEST",
        "evaluationRequest": {
            "goldenResponse": {"agentData": golden},
            "candidateResponses": [{"candidate": "agent", "agentData": candidate}],
            "rubrics": RUBRICS,
        },
    }


METRICS = [
    "tool_trajectory_avg_score",
    "response_match_score",
    "rubric_based_final_response_quality_v1",
]


def _run(client: Client, items: list[dict[str, Any]]) -> Any:
    created = [client.create_item(i) for i in items]
    evaluation_set = client.create_set(display_name="s", items=created)
    run = client.create_run(evaluation_set=evaluation_set, metrics=METRICS)
    return client.wait_for_run(run, timeout=30, poll_interval=0.02)


@pytest.fixture
def runs(sync_client: Client) -> tuple[Any, Any]:
    good = _run(
        sync_client,
        [_item("paris", "Sunny in Paris.", "Paris"), _item("lyon", "Rain in Lyon.", "Paris")],
    )
    worse = _run(
        sync_client, [_item("paris", "Sunny in Paris.", "Paris"), _item("lyon", "Rain.", "Nice")]
    )
    return good, worse


def test_rows_name_their_case_and_judge_thresholds(sync_client: Client, runs: Any) -> None:
    results = fetch_results(sync_client, runs[1], thresholds={"tool_trajectory_avg_score": 1.0})
    assert sorted(results.cases) == ["lyon", "paris"]
    by = {(r.eval_case_id, r.metric): r for r in results.rows}
    assert by[("paris", "tool_trajectory_avg_score")].status == Status.PASSED
    assert by[("lyon", "tool_trajectory_avg_score")].status == Status.FAILED
    assert by[("paris", "response_match_score")].status == Status.NOT_CHECKED
    verdicts = by[("paris", "rubric_based_final_response_quality_v1")].verdicts
    assert [(v.rubric_id, v.verdict) for v in verdicts] == [("mentions-paris", True)]
    assert not results.passed
    assert results.check({"tool_trajectory_avg_score": 0.0})
    with pytest.raises(
        ThresholdError, match=r"lyon \[agent\] tool_trajectory_avg_score: 0.000 < 1.0"
    ):
        results.assert_passed()


def test_every_format(sync_client: Client, runs: Any) -> None:
    results = fetch_results(sync_client, runs[1], thresholds={"tool_trajectory_avg_score": 1.0})
    document = json.loads(results.to_json())
    assert document["passed"] is False and len(document["rows"]) == 6
    rows = list(csv.DictReader(io.StringIO(results.to_csv())))
    assert {r["evalCaseId"] for r in rows} == {"paris", "lyon"}
    suite = ET.fromstring(results.to_junit()).find("testsuite")
    assert suite is not None and suite.get("tests") == "6" and suite.get("failures") == "1"
    failure = suite.find("testcase/failure")
    assert failure is not None and "tool_trajectory_avg_score" in (failure.get("message") or "")
    assert "## platform-eval: FAILED" in results.to_markdown()
    html = results.to_html()
    assert "<script" not in html and "get_weather" in html
    # The tab names the tool once, whether the run's name (the CLI's) already does or not.
    run = results.run
    assert run is not None
    named = dataclasses.replace(
        results, run=run.model_copy(update={"display_name": "platform-eval 1"})
    )
    for page in (html, named.to_html()):
        title = re.search(r"<title>(.*?)</title>", page)
        assert title is not None and title.group(1).count("platform-eval") == 1, title
    # A verdict shows its rubric's text, its id beside it.
    assert re.search(r"<b>[^<]+</b> <span class=\"id\">\(mentions-paris\)</span>", html)
    assert "Paris" in html and "Sunny in Paris." in html
    table = results.to_table(rubrics=True)
    assert "FAILED" in table and "rubric mentions-paris: PASS" in table
    assert "\033[" not in table
    console = Console(record=True, force_terminal=True, color_system="standard", width=160)
    print_results(results, rubrics=True, console=console)
    drawn = console.export_text(styles=True, clear=False)
    assert "\033[1;31mFAILED" in drawn  # the failing status in bold red
    plain = console.export_text()
    assert "mentions-paris" in plain and "Rubric verdicts" in plain and "Per metric" in plain
    frame = results.to_dataframe()
    assert list(frame["evalCaseId"].unique()) == ["paris", "lyon"] or set(frame["evalCaseId"]) == {
        "paris",
        "lyon",
    }


def test_compare_names_what_regressed(sync_client: Client, runs: Any) -> None:
    before, after = (fetch_results(sync_client, r) for r in runs)
    comparison = compare(before, after)
    regressed = {(c.eval_case_id, c.metric) for c in comparison.regressions}
    assert ("lyon", "tool_trajectory_avg_score") in regressed
    assert ("lyon", "response_match_score") in regressed
    assert all(c.eval_case_id == "lyon" for c in comparison.changes)
    assert "regressed" in comparison.to_table()


def test_results_of_an_evaluation_name_their_cases_without_reading_each_request(
    emulator: Any, project: str, tmp_path: Any
) -> None:
    """The upload knows which case each item holds: the results are named from that, with the
    same rows as when every request item is read (which took 0.6 s on 200 cases)."""
    import asyncio

    import httpx
    from conftest import FAST_RETRY
    from paths import SAMPLE_DATA

    from platform_eval import jobs

    reads: list[str] = []

    async def count(request: httpx.Request) -> None:
        if request.method == "GET" and "/evaluationItems/" in request.url.path:
            reads.append(request.url.path)

    async def main() -> tuple[Any, Any, dict[str, str]]:
        http = httpx.AsyncClient(event_hooks={"request": [count]}, timeout=30)
        async with emulator.async_client(project, retry=FAST_RETRY, http_client=http) as client:
            evaluation = await jobs.evaluate(
                client,
                SAMPLE_DATA / "weather.evalset.json",
                traces=[SAMPLE_DATA / "weather_traces.otlp.json"],
                metrics=["tool_trajectory_avg_score"],
                manifest=tmp_path / "m.jsonl",
                poll_interval=0.05,
            )
            case_ids = evaluation.upload.case_ids
            assert sorted(case_ids) == sorted(evaluation.evaluation_set.evaluation_items or [])
            reads.clear()
            told = await fetch_results(
                client, evaluation.run, items=evaluation.results, case_ids=case_ids
            )
            assert reads == []
            read = await fetch_results(client, evaluation.run, items=evaluation.results)
            assert len(reads) == len(case_ids)
            return told, read, case_ids

    told, read, case_ids = asyncio.run(main())
    assert told.rows and [r.as_dict() for r in told.rows] == [r.as_dict() for r in read.rows]
    assert {r.eval_case_id for r in told.rows} == set(case_ids.values())


@pytest.mark.parametrize(
    ("recorded", "said"),
    [
        ({"exact_match": -5}, "-5 is outside the range of exact_match's scores"),
        ({"exact_match": "high"}, "the threshold must be a number, not str"),
    ],
)
def test_a_threshold_recorded_with_a_run_that_cannot_judge_is_an_error_not_dropped(
    work: Path, capsys: pytest.CaptureFixture[str], recorded: dict[str, Any], said: str
) -> None:
    from platform_eval import connect
    from platform_eval.cli import main

    with connect() as target:
        client = target.client
        item = client.create_item(
            request_item("x", golden={"text": "a"}, candidates=[{"candidate": "c", "text": "a"}])
        )
        run = client.create_run(
            evaluation_set=client.create_set(display_name="s", items=[item]),
            metrics=["exact_match"],
            metadata={"platformEval": {"thresholds": recorded}},
        )
        client.wait_for_run(run, poll_interval=0.02, timeout=30)
    assert main(["-q", "results", str(run.name)]) == 2
    err = capsys.readouterr().err
    assert "the threshold recorded for exact_match" in err and said in err
    assert main(["-q", "results", str(run.name), "--ignore-run-thresholds"]) == 0
    assert main(["-q", "results", str(run.name), "--threshold", "exact_match=1"]) == 0


def test_the_plain_table_cuts_explanations_to_the_terminal_not_to_80_characters(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from platform_eval.cli.evaluate import _render
    from platform_eval.results.model import Row, RunResults

    why = "the answer names Paris but the expected one names Rome; " * 4  # 224 characters
    results = RunResults(None, [Row("paris", "i1", None, "agent", "exact_match", 0.0, 1.0, why)])
    whole = results.to_table()
    assert why.rstrip() in whole  # no width: nothing cut
    wide = results.to_table(width=300)
    assert why.rstrip() in wide and max(len(line) for line in wide.splitlines()[:3]) <= 300
    narrow = results.to_table(width=120)
    row = narrow.splitlines()[2]
    assert len(row) == 120 and row.endswith("…") and why[:40] in row
    # The command line fits the terminal it writes to ($COLUMNS, as a CI log sets it), and
    # writes a file whole.
    monkeypatch.setenv("COLUMNS", "200")
    assert len(_render(results, "table", False).splitlines()[2]) == 200
    assert why.rstrip() in _render(results, "table", False, to_file=True)
