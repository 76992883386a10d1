"""The results table on a terminal: rich, with colour and wrapped explanations.

Only for a terminal; pipes and files get ``RunResults.to_table``'s plain text, which scripts
can parse and which never carries escape codes.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..results import RunResults, Status
from ..results._safe_text import printable
from ..results.render import judge_line
from ..results.status import format_score

_STYLES = {
    Status.PASSED: "green",
    Status.FAILED: "bold red",
    Status.NOT_EVALUATED: "yellow",
    Status.NOT_CHECKED: "",
    Status.NOT_APPLICABLE: "dim",
}


def _rows(results: RunResults) -> Table:
    table = Table(show_lines=False, header_style="bold", expand=False)
    for header, justify in (
        ("case", "left"),
        ("candidate", "left"),
        ("metric", "left"),
        ("score", "right"),
        ("threshold", "right"),
        ("status", "left"),
        ("explanation", "left"),
    ):
        table.add_column(header, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in results.rows:
        table.add_row(
            _plain(row.eval_case_id),
            _plain(row.candidate),
            _plain(row.metric),
            format_score(row.score),
            "-" if row.threshold is None else f"{row.threshold:g}",
            Text(row.status.value, style=_STYLES[row.status]),
            _plain(row.explanation or ""),
        )
    return table


def _plain(text: str) -> Text:
    """User data as it is: never read as rich markup (``[/]``), no escape reaches the screen."""
    return Text(printable(text))


def _verdicts(results: RunResults) -> Table:
    table = Table(title="Rubric verdicts", header_style="bold", title_justify="left")
    for header in ("case", "candidate", "metric", "rubric", "verdict", "reasoning"):
        table.add_column(header, overflow="fold")
    for row in results.rows:
        for verdict in row.verdicts:
            table.add_row(
                _plain(row.eval_case_id),
                _plain(row.candidate),
                _plain(row.metric),
                _plain(f"{verdict.rubric_id or '-'}: {verdict.rubric}"),
                Text(verdict.mark, style=_STYLES[verdict.status]),
                _plain(verdict.reasoning or ""),
            )
    return table


def _summary(results: RunResults) -> Table:
    table = Table(title="Per metric", header_style="bold", title_justify="left")
    for header in ("metric", "mean", "threshold", "passed", "failed", "not evaluated"):
        table.add_column(header, justify="left" if header == "metric" else "right")
    for s in results.summary():
        table.add_row(
            _plain(s.metric),
            format_score(s.mean),
            "-" if s.threshold is None else f"{s.threshold:g}",
            Text(str(s.passed), style="green" if s.passed else ""),
            Text(str(s.failed), style="bold red" if s.failed else ""),
            Text(str(s.not_evaluated), style="yellow" if s.not_evaluated else ""),
        )
    return table


def _spreads(results: RunResults) -> Table | None:
    spreads = results.spreads()
    if not spreads:
        return None
    table = Table(title="Per case, over its candidates", header_style="bold", title_justify="left")
    for header in ("case", "metric", "candidates", "mean", "stdev", "min", "max"):
        table.add_column(header, justify="left" if header in ("case", "metric") else "right")
    for s in spreads:
        table.add_row(
            _plain(s.eval_case_id),
            _plain(s.metric),
            str(s.candidates),
            format_score(s.mean),
            format_score(s.stdev),
            format_score(s.low),
            format_score(s.high),
        )
    return table


def print_results(results: RunResults, *, rubrics: bool, console: Console | None = None) -> None:
    """Cases, rubric verdicts (with ``rubrics``), the per-metric summary and the verdict."""
    console = console or Console()
    console.print(_rows(results))
    if rubrics and any(row.verdicts for row in results.rows):
        console.print(_verdicts(results))
    spreads = _spreads(results)
    if spreads is not None:
        console.print(spreads)
    console.print(_summary(results))
    if results.judge is not None:
        console.print(Text(judge_line(results.judge)))
    found = results.reliability()
    if found is not None:
        console.print(Text(printable(found.line())))
    spent = results.usage()
    if spent is not None:
        console.print(Text(printable(spent.line())))
    verdict = results.verdict
    style = {Status.PASSED: "bold green", Status.NOT_CHECKED: "bold"}.get(verdict, "bold red")
    console.print(Text(printable(results.verdict_line()), style=style))
