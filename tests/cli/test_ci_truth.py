"""What CI shows is true (issue 23): no PASSED, green header or passing testcase for a check
that was not made, and the thresholds a run was judged by travel with it."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from conftest import free_port

from platform_eval.cli import main
from platform_eval.results import RunResults, compare
from platform_eval.results.model import Row
from platform_eval.types import EvaluationRun

RUN = ["run", "data/weather.evalset.json", "--traces", "data/weather_traces.otlp.json"]


def _last_run(capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["-q", "runs", "list"]) == 0
    return capsys.readouterr().out.splitlines()[0].split("\t")[0]


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_results_apply_the_thresholds_the_run_recorded(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A threshold no candidate meets: the run fails, and so do its results read later, with
    # no --config given, in every format (the README's CI example among them).
    code = main(
        [
            "-q",
            *RUN,
            "--metrics",
            "response_match_score",
            "--threshold",
            "response_match_score=0.99",
        ]
    )
    assert code == 1
    capsys.readouterr()
    run = _last_run(capsys)
    assert main(["-q", "results", run, "--rubrics", "--format", "junit", "-o", "junit.xml"]) == 1
    suite = ET.parse(work / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    capsys.readouterr()
    assert main(["-q", "results", run, "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["thresholds"] == {"response_match_score": 0.99}
    assert document["verdict"] == "FAILED" and document["passed"] is False
    # Told otherwise, the run's thresholds give way: --threshold wins per metric, and
    # --ignore-run-thresholds leaves only what is given.
    assert main(["-q", "results", run, "--threshold", "response_match_score=0.1"]) == 0
    capsys.readouterr()
    assert main(["-q", "results", run, "--ignore-run-thresholds", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "NOT_CHECKED"


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_results_with_no_threshold_are_not_checked_never_passed(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-q", *RUN, "--metrics", "response_match_score,exact_match"]) == 0
    out = capsys.readouterr().out
    assert "PASSED" not in out and "NOT CHECKED: no metric has a threshold" in out
    run = _last_run(capsys)

    assert main(["-q", "results", run, "--format", "junit", "-o", "junit.xml"]) == 0
    suite = ET.parse(work / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert cases and suite.get("skipped") == str(len(cases)) and suite.get("failures") == "0"
    for case in cases:
        skipped = case.find("skipped")
        assert skipped is not None and skipped.get("message", "").startswith("NOT_CHECKED")
    assert "PASSED" not in capsys.readouterr().out

    assert main(["-q", "results", run, "-o", "report.html"]) == 0
    html = (work / "report.html").read_text()
    assert '<span class="NOT_CHECKED">NOT_CHECKED</span></h1>' in html
    assert '"PASSED"' not in html and ">PASSED<" not in html

    assert main(["-q", "results", run, "-o", "summary.md"]) == 0
    assert (work / "summary.md").read_text().startswith("## platform-eval: NOT CHECKED")

    assert main(["-q", "results", run]) == 0
    table = capsys.readouterr().out
    assert "PASSED" not in table and table.rstrip().splitlines()[-1].startswith("NOT CHECKED")


@pytest.mark.parametrize(
    ("threshold", "message"),
    [
        (
            "respnse_match_score=0.5",
            "no metric 'respnse_match_score' in this run; did you mean 'response_match_score'?",
        ),
        ("response_match_score=1.5", "1.5 is outside the range of response_match_score's scores"),
        ("response_match_score=-1", "-1 is outside the range of response_match_score's scores"),
        ("response_match_score=nan", "the threshold nan is not a finite number"),
        ("response_match_score=inf", "the threshold inf is not a finite number"),
    ],
)
def test_a_threshold_that_cannot_mean_anything_is_refused_before_uploading(
    work: Path, capsys: pytest.CaptureFixture[str], threshold: str, message: str
) -> None:
    code = main(["-q", *RUN, "--metrics", "response_match_score", "--threshold", threshold])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert main(["-q", "items", "list"]) == 0
    assert capsys.readouterr().out == ""  # nothing was uploaded


def test_results_refuse_a_threshold_for_a_metric_the_run_has_not(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-q", *RUN, "--metrics", "response_match_score"]) == 0
    capsys.readouterr()
    run = _last_run(capsys)
    assert main(["-q", "results", run, "--threshold", "response_match=0.5"]) == 2
    assert "did you mean 'response_match_score'?" in capsys.readouterr().err


def test_validate_refuses_config_thresholds_out_of_range(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = work / "eval_config.json"
    config.write_text(
        '{"criteria": {"response_match_score": 1.5, "exact_match": {"threshold": -1},'
        ' "tool_trajectory_avg_score": {"threshold": NaN}}}'
    )
    assert main(["validate", str(config)]) == 2
    out = capsys.readouterr().out
    assert f"{config}: criteria.response_match_score.threshold: 1.5 is outside" in out
    assert f"{config}: criteria.exact_match.threshold: -1 is outside" in out
    assert "criteria.tool_trajectory_avg_score.threshold: the threshold nan" in out
    # And run refuses the same config before uploading anything.
    assert main(["-q", *RUN, "--config", str(config)]) == 2
    assert "criteria.response_match_score.threshold: 1.5 is outside" in capsys.readouterr().err


def _runs(capsys: pytest.CaptureFixture[str]) -> set[str]:
    capsys.readouterr()
    assert main(["-q", "runs", "list"]) == 0
    return {line.split("\t")[0] for line in capsys.readouterr().out.splitlines()}


def _two_runs(
    work: Path, capsys: pytest.CaptureFixture[str], first: str, second: str
) -> tuple[str, str]:
    """Two runs of the sample with candidates named ``first`` and ``second``, the second with a
    golden answer its candidate no longer matches (every score drops): (older, newer)."""
    metrics = ["--metrics", "response_match_score"]
    assert main(["-q", *RUN, *metrics, "--candidate", first]) == 0
    (older,) = _runs(capsys)
    data = json.loads((work / "data/weather.evalset.json").read_text())
    for invocation in data["eval_cases"][0]["conversation"]:
        invocation["final_response"]["parts"][0]["text"] = "Snow everywhere, always."
    (work / "data/weather.evalset.json").write_text(json.dumps(data))
    assert main(["-q", *RUN, *metrics, "--candidate", second]) == 0
    (newer,) = _runs(capsys) - {older}
    return older, newer


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_compare_pairs_cases_whatever_the_candidate_names(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older, newer = _two_runs(work, capsys, "agent_v1", "agent_v2")
    code = main(["-q", "compare", older, newer, "--fail-on-regression", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    # One case is too few for the significance test: the any-drop rule decides, and says so.
    assert code == 1
    assert document["metrics"]["response_match_score"]["verdict"] == "regressed"
    assert document["metrics"]["response_match_score"]["rule"] == "any drop"
    moved = document["metrics"]["response_match_score"]
    assert moved["after"] < moved["before"]
    assert document["paired"] == 1
    assert [c["candidate"] for c in document["regressed"]] == ["agent_v1->agent_v2"]
    # An explicit pairing that names no candidate of either run pairs nothing: exit 2, why.
    assert main(["-q", "compare", older, newer, "--candidate", "x=y"]) == 2
    err = capsys.readouterr().err
    assert "nothing to compare" in err and "pass --candidate BEFORE=AFTER" in err
    assert main(["-q", "compare", older, newer, "--candidate", "agent_v1=agent_v2"]) == 0
    assert "agent_v1->agent_v2" in capsys.readouterr().out


def _results(name: str, *rows: tuple[str, str, float]) -> RunResults:
    run = EvaluationRun.model_validate({"name": name, "state": "SUCCEEDED"})
    return RunResults(
        run,
        [
            Row(case, f"{name}/i", None, candidate, "m", score, None, None)
            for case, candidate, score in rows
        ],
    )


def test_compare_pairs_several_candidates_by_name_and_lists_cases_in_one_run() -> None:
    before = _results("a", ("c1", "x", 1.0), ("c1", "y", 1.0), ("c2", "x", 1.0))
    after = _results("b", ("c1", "x", 0.5), ("c1", "z", 1.0), ("c3", "x", 0.0))
    comparison = compare(before, after)
    assert comparison.paired == 1
    assert [(c.eval_case_id, c.candidate) for c in comparison.regressions] == [("c1", "x")]
    assert (comparison.only_before, comparison.only_after) == (["c2"], ["c3"])
    table = comparison.to_table()
    assert "only in a: c2" in table and "only in b: c3" in table
    nothing = compare(
        _results("a", ("c1", "x", 1.0), ("c1", "y", 1.0)),
        _results("b", ("c1", "p", 1.0), ("c1", "q", 0.0)),
    )
    assert nothing.paired == 0
    assert "c1: candidates ['x', 'y'] before and ['p', 'q'] after share no name" in (
        nothing.why_nothing_paired()
    )


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["runs", "list"], marks=pytest.mark.slow),
        pytest.param(["results", "r1"], marks=pytest.mark.slow),
        [*RUN, "--metrics", "exact_match"],
    ],
    ids=["runs list", "results", "run"],
)
def test_an_unreachable_endpoint_is_one_line_exit_2(
    work: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    port = free_port()  # nothing listens there
    assert main(["--endpoint", f"127.0.0.1:{port}", *command]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = [line for line in err.splitlines() if "error:" in line]
    # The transport's own words follow the class name ("Connection refused", or the async
    # client's "All connection attempts failed").
    assert f"could not reach http://127.0.0.1:{port} (ConnectError: " in line


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
def test_an_unknown_host_says_so(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", "no-such-host.invalid:80", "runs", "list"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "could not reach http://no-such-host.invalid:80" in err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "eval_config.json: $: no such file"),
        ('{"criteria": {', "eval_config.json: line 1 column 15: invalid JSON"),
        (
            '{"criteria": {"response_match_score": "high"}}',
            "eval_config.json: $.criteria.response_match_score: expected a threshold number",
        ),
    ],
    ids=["missing", "truncated", "bad value"],
)
def test_a_config_file_problem_names_the_file_not_no_metrics(
    work: Path, capsys: pytest.CaptureFixture[str], content: str | None, expected: str
) -> None:
    if content is not None:
        (work / "eval_config.json").write_text(content)
    assert main(["-q", *RUN, "--config", "eval_config.json"]) == 2
    err = capsys.readouterr().err
    assert expected in err and "no metrics" not in err and "Traceback" not in err


def test_a_rerun_on_the_embedded_emulator_attaches_to_the_run_it_started(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --no-wait stands for a Ctrl-C after the run started: the next command is a new process
    # in spirit (a new embedded emulator, on a new port, on the same database file).
    assert main(["-q", *RUN, "--metrics", "exact_match", "--no-wait"]) == 0
    started = capsys.readouterr().out.strip()
    assert main([*RUN, "--metrics", "exact_match"]) in (0, 1)
    err = capsys.readouterr().err
    assert f"attached to {started}, started by an earlier attempt" in err
    assert _runs(capsys) == {started}


def test_markdown_and_csv_carry_rubric_verdicts_and_one_standard_deviation(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-q", *RUN, "--config", "data/eval_config.json", "-o", "r.md"]) == 0
    markdown = (work / "r.md").read_text()
    assert "| rubric | verdict | reasoning |" in markdown
    assert "| looks-up-the-weather | PASS | get_weather was called" in markdown
    run = _last_run(capsys)
    assert main(["-q", "results", run, "-o", "r.csv"]) == 0
    import csv

    rows = list(csv.DictReader((work / "r.csv").open()))
    rubric_row = next(r for r in rows if r["metric"].startswith("rubric_based"))
    assert "looks-up-the-weather: PASS - get_weather was called" in rubric_row["rubricVerdicts"]
    # The report's standard deviation is the run's own (of the population, as the service's).
    assert main(["-q", "results", run, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    from platform_eval.target import connect

    with connect(db=work / ".platform-eval" / "emulator.sqlite") as target:
        summary = target.client.get_run(run).summary
    for metric in document["summary"]:
        # One candidate here: the run's summary of it is the report's.
        (key,) = [k for k in summary if k.endswith(f"/{metric['metric']}/STANDARD_DEVIATION")]
        assert metric["stdev"] == pytest.approx(summary[key])


def test_the_results_standard_deviation_is_the_one_the_run_reports() -> None:
    from platform_eval import metrics

    scores = [1.0, 0.5, 0.0, 0.25]
    results = _results("a", *((f"c{i}", "x", s) for i, s in enumerate(scores)))
    (summary,) = results.summary()
    assert summary.stdev == pytest.approx(
        metrics.summarize({("c", "m"): scores})["c/m/STANDARD_DEVIATION"]
    )


def _spans_and_logs(folder: Path) -> tuple[Path, Path]:
    """A real ADK run whose message content went to log records only (EVENT_ONLY): the spans
    file and the logs file mean one conversation only when read together."""
    from adk_runs import record

    recording = record(schema=2, content="EVENT_ONLY")
    spans, logs = folder / "spans.json", folder / "logs.jsonl"
    spans.write_text(json.dumps(recording.otlp_json()))
    logs.write_text(json.dumps(recording.otlp_logs_json()) + "\n")
    return spans, logs


def _protobuf(spans: Path, out: Path) -> Path:
    import base64

    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    data = json.loads(spans.read_text())
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    out.write_bytes(ParseDict(data, ExportTraceServiceRequest()).SerializeToString())
    return out


def test_validate_reads_what_run_reads(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = work / "recorded"
    folder.mkdir()
    spans, logs = _spans_and_logs(folder)
    (folder / "notes.txt").write_text("not a trace")
    # run reads the pair together; validate says the same of the pair, and of the folder.
    assert main(["validate", str(spans), str(logs)]) == 0
    out = capsys.readouterr().out
    assert "(read together): 1 conversations" in out
    assert main(["validate", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "logs.jsonl" in out and "(read together)" in out
    assert f"skipped: {folder / 'notes.txt'}: not a file platform-eval reads" in out
    # OTLP protobuf, which run reads.
    binary = _protobuf(spans, work / "spans.pb")
    assert main(["validate", str(binary), str(logs)]) == 0
    assert "(read together): 1 conversations" in capsys.readouterr().out
    # A logs file alone holds no conversation: that is a problem, named.
    assert main(["validate", str(logs)]) == 2


@pytest.mark.parametrize("flag", ["--quarantine", "--prices"])
def test_a_quarantine_or_price_file_that_never_ends_is_refused_not_read(
    work: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """/dev/zero read whole was a MemoryError: a regular file only, under the files' limit."""
    code = main(["-q", *RUN, "--metrics", "response_match_score", flag, "/dev/zero"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{flag} /dev/zero" in err and "is a device" in err and "Traceback" not in err
