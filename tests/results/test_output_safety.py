"""User data in reports is shown, never obeyed (attack probe, issue 27 Medium 9 and Low): rich
markup in a case id, escape sequences from an agent's answer, XML's forbidden characters,
spreadsheet formulas."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from xml.etree import ElementTree as ET

from rich.console import Console

from platform_eval.cli._rich_table import print_results
from platform_eval.results import RunResults
from platform_eval.results.model import Row, Verdict
from platform_eval.types import EvaluationRun

HOSTILE_ANSWER = "\x1b[31mred\x1b[0m and a bell\x07"


def _results() -> RunResults:
    run = EvaluationRun.model_validate({"name": "projects/p/locations/l/evaluationRuns/1"})
    run.state = "SUCCEEDED"  # type: ignore[assignment]
    verdict = Verdict("r1", "[bold]rubric[/bold]", False, "the agent said " + HOSTILE_ANSWER)
    rows = [
        Row(
            "paris[/]", "i", None, "agent[red]", "exact_match", 0.0, 0.5, HOSTILE_ANSWER, (verdict,)
        ),
        Row('=HYPERLINK("http://x")', "i", None, "@agent", "exact_match", 1.0, 0.5, "-1+2", ()),
        Row("nul\x00case", "i", None, "agent", "exact_match", None, 0.5, "\x00\x1b\x0c", ()),
    ]
    return RunResults(run, rows)


def test_the_terminal_table_shows_markup_and_escapes_as_text() -> None:
    out = io.StringIO()
    print_results(
        _results(), rubrics=True, console=Console(file=out, force_terminal=True, width=200)
    )
    shown = out.getvalue()
    assert "paris[/]" in shown and "agent[red]" in shown and "[bold]rubric[/bold]" in shown
    assert "\x1b[31mred" not in shown and "\x07" not in shown
    assert "\\x1b[31mred\\x1b[0m" in shown


def _rendered(markdown: str) -> str:
    """The HTML a GitHub-flavoured renderer makes of a Markdown report (markdown-it, which rich
    brings, with GFM's tables)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)


def test_plain_text_and_markdown_carry_no_raw_escapes() -> None:
    results = _results()
    for text in (results.to_table(rubrics=True), results.to_markdown()):
        assert "\x1b" not in text and "\x07" not in text and "\x00" not in text
    assert "\\x1b[31mred" in results.to_table(rubrics=True)
    assert "\\x1b[31mred" in _rendered(results.to_markdown())


HOSTILE_IDS = (
    '<img src=x onerror="alert(1)">',
    "[click me](https://evil.example/)",
    "![pixel](https://evil.example/p.png)",
    "safe\u202eevil",
    "a | b",
)


def test_a_markdown_report_shows_html_links_and_bidi_overrides_as_text() -> None:
    run = EvaluationRun.model_validate({"name": "projects/p/locations/l/evaluationRuns/1"})
    run.state = "SUCCEEDED"  # type: ignore[assignment]
    rows = [
        Row(case, "i", None, "agent", "exact_match", 0.0, 0.5, case, ()) for case in HOSTILE_IDS
    ]
    html = _rendered(RunResults(run, rows).to_markdown())
    assert "<img" not in html and "<a " not in html and "\u202e" not in html
    for shown in ("&lt;img src=x", "[click me](https://evil.example/)", "safe\\u202eevil"):
        assert shown in html
    # Two header rows, one summary row, a row per failure: no cell split a row.
    assert html.count("<tr>") == 3 + len(HOSTILE_IDS)


def test_an_html_report_writes_a_bidi_override_out() -> None:
    run = EvaluationRun.model_validate({"name": "projects/p/locations/l/evaluationRuns/1"})
    run.state = "SUCCEEDED"  # type: ignore[assignment]
    rows = [Row("safe\u202eevil", "i", None, "agent\u2066", "exact_match", 1.0, 0.5, "ok", ())]
    document = RunResults(run, rows).to_html()
    assert "\u202e" not in document and "\u2066" not in document
    assert "safe\\u202eevil" in document


def test_an_html_report_shows_markup_and_control_characters_as_text() -> None:
    run = EvaluationRun.model_validate({"name": "projects/p/locations/l/evaluationRuns/1"})
    run.state = "SUCCEEDED"  # type: ignore[assignment]
    rows = [
        Row(case, "i", None, "agent", "exact_match", 0.0, 0.5, f"{case} \x1b[31m", ())
        for case in HOSTILE_IDS
    ]
    document = RunResults(run, rows).to_html()
    assert "<img" not in document and 'onerror="' not in document
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in document
    assert "\x1b" not in document  # a terminal escape is never written as it is


def test_a_comparison_in_html_shows_hostile_names_as_text() -> None:
    from platform_eval.results import compare

    def run_of(name: str, score: float) -> RunResults:
        run = EvaluationRun.model_validate(
            {"name": f"projects/p/locations/l/evaluationRuns/{name}", "displayName": "<b>x</b>"}
        )
        run.state = "SUCCEEDED"  # type: ignore[assignment]
        rows = [
            Row(case, "i", None, "agent", "<script>m</script>", score, None, "e", ())
            for case in HOSTILE_IDS
        ]
        return RunResults(run, rows)

    document = compare(run_of("1", 1.0), run_of("2", 0.0)).to_html()
    assert "<script>" not in document and "<img" not in document and "\u202e" not in document
    assert "&lt;script&gt;m&lt;/script&gt;" in document


def test_junit_is_well_formed_whatever_the_text() -> None:
    document = _results().to_junit()
    root = ET.fromstring(document)
    names = [case.get("name") for case in root.iter("testcase")]
    assert "nul\\x00case [agent] exact_match" in names


def test_csv_cells_that_a_spreadsheet_would_run_are_quoted() -> None:
    rows = list(csv.DictReader(io.StringIO(_results().to_csv())))
    assert rows[1]["evalCaseId"] == '\'=HYPERLINK("http://x")'
    assert rows[1]["candidate"] == "'@agent"
    assert rows[1]["explanation"] == "'-1+2"
    assert rows[1]["score"] == "1.0"  # numbers are left as they are


def test_a_carriage_return_before_a_formula_starts_no_live_cell() -> None:
    """A reader that ends a row at a carriage return would start a new cell at ``=...``: every
    line of a cell is quoted, and line breaks are written as newlines."""
    run = EvaluationRun.model_validate({"name": "projects/p/locations/l/evaluationRuns/1"})
    run.state = "SUCCEEDED"  # type: ignore[assignment]
    hostile = 'ok\r=HYPERLINK("http://x")'
    row = Row("case\r@cmd", "i", None, "agent", "exact_match", 1.0, 0.5, hostile, ())
    text = RunResults(run, [row]).to_csv()
    assert "\r" not in text
    [read] = list(csv.DictReader(io.StringIO(text)))
    assert read["evalCaseId"] == "case\n'@cmd"
    assert read["explanation"] == 'ok\n\'=HYPERLINK("http://x")'
    for line in text.splitlines():
        assert not line.startswith(("=", "@", "+")), line


def test_the_failure_analysis_and_judge_agreement_pages_show_hostile_text_as_text() -> None:
    """The two pages that were hand-built strings render through the same autoescaping
    templates as the report and compare: markup, control characters and bidi overrides in
    case ids, cluster descriptions and rubric names are text."""
    from platform_eval.results.agreement import Agreement, AgreementReport, Verdicts
    from platform_eval.results.loss import LossClusterRow, LossReport

    hostile = '<img src=x onerror="alert(1)">\u202e\x1b[31m'
    loss = LossReport(
        run=hostile,
        metric="<script>m</script>",
        failing=2,
        clusters=(LossClusterRow(hostile, "l2", hostile, 2, 1.0, tuple(HOSTILE_IDS)),),
        recorded=True,
    )
    verdicts = (Verdicts(HOSTILE_IDS[0], "agent", "<b>m</b>", hostile, True, (False,)),)
    group = Agreement("<b>m</b>", hostile, verdicts)
    agreement = AgreementReport(groups=(group,), overall=group, unmatched=[hostile])
    for document in (loss.to_html(), agreement.to_html()):
        assert "<img" not in document and "<script>" not in document and "<b>" not in document
        assert "\u202e" not in document and "\x1b" not in document
        assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in document


def test_the_optimize_page_shows_a_proposed_instruction_as_text(tmp_path: Path) -> None:
    """An instruction is what a reflection model wrote: the page shows it, never runs it."""
    from platform_eval.jobs.optimize import OptimizeReport, Tried, write_report
    from platform_eval.results.significance import assess

    hostile = '<img src=x onerror="alert(1)">\u202e\x1b[31m'
    baseline = Tried("Greet.", {"root": "Greet."}, {"a": [0.0], "b": [0.0]})
    best = Tried(hostile, {"root": hostile}, {"a": [1.0], "b": [1.0]})
    test = assess("case score", baseline.scores, best.scores)
    report = OptimizeReport(
        ["a"], ["a", "b"], "given", baseline, best, test, True, [baseline, best], 1, "m"
    )
    write_report(report, tmp_path)
    document = (tmp_path / "optimize.html").read_text()
    assert "<img" not in document and "\u202e" not in document and "\x1b" not in document
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in document
