"""RunResults as JSON, CSV, JUnit XML, Markdown and a terminal table."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

if TYPE_CHECKING:
    from .model import CaseSpread, Row, RunResults
    from .reliability import CaseReliability

from ._safe_text import markdown_text, printable, spreadsheet_cell, xml_text
from .status import Status, format_score


def to_json(results: RunResults, *, indent: int | None = 2) -> str:
    document: dict[str, Any] = {
        "run": results.run_name,
        "state": results.run_state,
        "passed": results.passed,
        "verdict": results.verdict.value,
        "thresholds": results.thresholds,
        "summary": [
            {
                "metric": s.metric,
                "mean": s.mean,
                "stdev": s.stdev,
                "scored": s.scored,
                "notEvaluated": s.not_evaluated,
                "passed": s.passed,
                "failed": s.failed,
                "threshold": s.threshold,
                "status": s.status.value,
            }
            for s in results.summary()
        ],
        "rows": [row.as_dict() for row in results.rows],
    }
    spreads = results.spreads()
    if spreads:
        # Per case over its candidates: the repeated runs of an agent.
        document["perCase"] = [
            {
                "evalCaseId": s.eval_case_id,
                "metric": s.metric,
                "candidates": s.candidates,
                "scored": s.scored,
                "mean": s.mean,
                "stdev": s.stdev,
                "min": s.low,
                "max": s.high,
            }
            for s in spreads
        ]
    found = results.reliability()
    if found is not None:
        document["reliability"] = {
            **found.as_dict(),
            "thresholds": results.reliability_thresholds,
            "missed": results.reliability_misses(),
        }
    spent = results.usage()
    if spent is not None:
        document["agentUsage"] = {
            **spent.as_dict(),
            "thresholds": results.usage_thresholds,
            "missed": results.usage_misses(),
        }
    if results.run is not None and results.run.summary:
        # The run's own summary, as the service wrote it: per candidate, every aggregation.
        document["runSummary"] = results.run.summary_by_candidate
    if results.judge is not None:
        document["judge"] = results.judge
    return json.dumps(document, indent=indent, ensure_ascii=False)


def judge_line(judge: dict[str, Any]) -> str:
    """What judging cost, in one line."""
    return (
        f"judge: {judge['calls']} model calls, {judge['cacheHits']} answered from the cache; "
        f"{judge['promptTokens']} prompt, {judge['candidatesTokens']} output and "
        f"{judge.get('thoughtsTokens', 0)} thinking tokens"
    )


CSV_COLUMNS = [
    "evalCaseId",
    "candidate",
    "metric",
    "score",
    "threshold",
    "status",
    "explanation",
    "item",
    "rubricVerdicts",
    "caseMean",
    "caseStdev",
    "caseRuns",
    "casePassed",
]


def _verdicts_cell(row: Row) -> str:
    """Every rubric verdict of a row in one cell: ``id: PASS - reasoning``, one per line."""
    return "\n".join(
        f"{v.rubric_id or v.rubric}: {v.mark} - {v.reasoning or ''}".rstrip(" -")
        for v in row.verdicts
    )


def to_csv(results: RunResults) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    spread = results.spread_of()
    runs = _case_runs(results)
    for row in results.rows:
        case = spread.get((row.eval_case_id, row.metric))
        ran = runs.get(row.eval_case_id)
        record = {
            **row.as_dict(),
            "rubricVerdicts": _verdicts_cell(row),
            "caseMean": case.mean if case else None,
            "caseStdev": case.stdev if case else None,
            "caseRuns": ran.runs if ran else None,
            "casePassed": ran.passed if ran else None,
        }
        writer.writerow(
            ["" if record[c] is None else spreadsheet_cell(record[c]) for c in CSV_COLUMNS]
        )
    return out.getvalue()


def _case_runs(results: RunResults) -> dict[str, CaseReliability]:
    found = results.reliability()
    return {c.eval_case_id: c for c in found.cases} if found is not None else {}


def _case_name(row: Row) -> str:
    return (
        f"{row.eval_case_id} [{row.candidate}] {row.metric}"
        if row.candidate
        else (f"{row.eval_case_id} {row.metric}")
    )


def _details(row: Row, spread: CaseSpread | None = None) -> str:
    lines = [
        f"score: {format_score(row.score)}",
        f"threshold: {row.threshold if row.threshold is not None else '-'}",
        f"explanation: {row.explanation or '-'}",
    ]
    if spread is not None:
        lines.append(f"this case: {spread.describe()}")
    lines += [
        f"rubric {v.rubric_id or '-'} ({v.rubric}): {v.mark} - {v.reasoning or ''}"
        for v in row.verdicts
    ]
    return "\n".join(lines)


def _xml_safe(element: ET.Element) -> ET.Element:
    """Every attribute and text of the tree with the characters XML forbids written out."""
    for node in element.iter():
        node.attrib = {key: xml_text(value) for key, value in node.attrib.items()}
        if node.text:
            node.text = xml_text(node.text)
    return element


def to_junit(results: RunResults) -> str:
    """One testcase per eval case, candidate and metric; failures carry the explanation."""
    suite = ET.Element(
        "testsuite",
        name=f"platform-eval {results.title}",
        tests=str(len(results.rows)),
        failures=str(sum(1 for r in results.rows if r.status == Status.FAILED)),
        skipped=str(sum(1 for r in results.rows if r.threshold is None)),
        errors=str(
            sum(
                1
                for r in results.rows
                if r.status == Status.NOT_EVALUATED and r.threshold is not None
            )
        ),
    )
    found = results.reliability()
    if found is not None:
        properties = ET.SubElement(suite, "properties")
        for name in found.names():
            value = found.value(name)
            if value is not None:
                ET.SubElement(properties, "property", name=name, value=f"{value:.6g}")
        ET.SubElement(properties, "property", name="flaky", value=",".join(found.flaky))
        ET.SubElement(properties, "property", name="quarantined", value=",".join(found.quarantined))
    spent = results.usage()
    if spent is not None:
        kept = suite.find("properties")
        properties = kept if kept is not None else ET.SubElement(suite, "properties")
        for name, value in spent.as_dict().items():
            if isinstance(value, int | float):
                ET.SubElement(properties, "property", name=name, value=f"{value:.6g}")
    spread = results.spread_of()
    for row in results.rows:
        case = ET.SubElement(suite, "testcase", classname=row.eval_case_id, name=_case_name(row))
        across = spread.get((row.eval_case_id, row.metric))
        if across is not None and across.mean is not None:
            properties = ET.SubElement(case, "properties")
            for name, value in (("caseMean", across.mean), ("caseStdev", across.stdev)):
                ET.SubElement(properties, "property", name=name, value=f"{value:.6g}")
        if row.status == Status.FAILED:
            failure = ET.SubElement(
                case,
                "failure",
                message=f"{row.metric} {format_score(row.score)} < {row.threshold}",
                type="ThresholdNotMet",
            )
            failure.text = _details(row, across)
        elif row.status == Status.NOT_EVALUATED:
            tag = "error" if row.threshold is not None else "skipped"
            element = ET.SubElement(
                case, tag, message=f"NOT_EVALUATED: {row.explanation or 'no reason given'}"
            )
            element.text = _details(row, across)
        elif row.status == Status.NOT_APPLICABLE:
            element = ET.SubElement(
                case, "skipped", message=f"NOT_APPLICABLE: {row.explanation or row.metric}"
            )
            element.text = _details(row, across)
        elif row.status == Status.NOT_CHECKED:
            # A score with no threshold is no passing test: nothing was checked.
            element = ET.SubElement(
                case, "skipped", message=f"NOT_CHECKED: no threshold for {row.metric}"
            )
            element.text = _details(row, across)
        else:
            ET.SubElement(case, "system-out").text = _details(row, across)
    root = ET.Element("testsuites")
    root.append(_xml_safe(suite))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _md(text: str | None) -> str:
    return markdown_text(text or "")


def to_markdown(results: RunResults) -> str:
    """A summary and a table of failures: fits ``$GITHUB_STEP_SUMMARY``."""
    verdict = results.verdict
    lines = [
        f"## platform-eval: {verdict.value.replace('_', ' ')}",
        "",
        f"{results.run_line()}, {len(results.cases)} cases.",
        "",
        "| metric | mean | threshold | passed | failed | not evaluated |",
        "|---|---|---|---|---|---|",
    ]
    for s in results.summary():
        lines.append(
            f"| {_md(s.metric)} | {format_score(s.mean)} | "
            f"{s.threshold if s.threshold is not None else '-'} | "
            f"{s.passed} | {s.failed} | {s.not_evaluated} |"
        )
    if results.judge is not None:
        lines += ["", judge_line(results.judge)]
    found = results.reliability()
    if found is not None:
        lines += ["", _md(found.line())]
    spent = results.usage()
    if spent is not None:
        lines += ["", _md(spent.line())]
    spreads = results.spreads()
    if spreads:
        lines += ["", "| case | metric | candidates | mean | stdev | min | max |"]
        lines.append("|---|---|---|---|---|---|---|")
        for sp in spreads:
            lines.append(
                f"| {_md(sp.eval_case_id)} | {_md(sp.metric)} | {sp.candidates} | "
                f"{format_score(sp.mean)} | {format_score(sp.stdev)} | {format_score(sp.low)} | "
                f"{format_score(sp.high)} |"
            )
    verdicts = [(row, v) for row in results.rows for v in row.verdicts]
    if verdicts:
        lines += ["", "| case | candidate | metric | rubric | verdict | reasoning |"]
        lines.append("|---|---|---|---|---|---|")
        for row, v in verdicts:
            lines.append(
                f"| {_md(row.eval_case_id)} | {_md(row.candidate)} | {_md(row.metric)} | "
                f"{_md(v.rubric_id or v.rubric)} | {v.mark} | {_md(v.reasoning)} |"
            )
    failures = results.failures()
    if failures:
        lines += ["", "| case | candidate | metric | score | threshold | explanation |"]
        lines.append("|---|---|---|---|---|---|")
        for row in failures:
            lines.append(
                f"| {_md(row.eval_case_id)} | {_md(row.candidate)} | {_md(row.metric)} | "
                f"{format_score(row.score)} | {row.threshold} | {_md(row.explanation)} |"
            )
    return "\n".join(lines) + "\n"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


#: The narrowest an explanation is cut to, however narrow the terminal.
MIN_EXPLANATION = 40


def _cut(text: str, room: int | None) -> str:
    if room is None or len(text) <= room:
        return text
    return text[: max(room, MIN_EXPLANATION) - 1] + "…"


def to_table(results: RunResults, *, rubrics: bool = False, width: int | None = None) -> str:
    """A plain-text table, then the per-metric summary (the CLI draws a rich one on a
    terminal). ``width``: the terminal's columns, which the explanations are cut to fit (ending
    with ``…``; the JSON report has them whole); None: not cut."""
    cells = [
        [
            printable(row.eval_case_id),
            printable(row.candidate),
            printable(row.metric),
            format_score(row.score),
            "-" if row.threshold is None else f"{row.threshold:g}",
            row.status.value,
        ]
        for row in results.rows
    ]
    headers = ["case", "candidate", "metric", "score", "threshold", "status"]
    used = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    # What the other columns and their two-space gaps leave the explanation.
    room = width - sum(used) - 2 * len(used) if width else None
    rows = [
        [*r, _cut(printable(row.explanation or ""), room)]
        for r, row in zip(cells, results.rows, strict=True)
    ]
    lines = _table([*headers, "explanation"], rows)
    if rubrics:
        for row in results.rows:
            for v in row.verdicts:
                lines.append(
                    printable(
                        f"  {row.eval_case_id} [{row.candidate}] rubric {v.rubric_id or '-'}: "
                        f"{v.mark}: {v.rubric} - {v.reasoning or ''}"
                    )
                )
    spreads = results.spreads()
    if spreads:
        lines += ["", "per case, over its candidates:"]
        lines += _table(
            ["case", "metric", "candidates", "mean", "stdev", "min", "max"],
            [
                [
                    printable(sp.eval_case_id),
                    printable(sp.metric),
                    str(sp.candidates),
                    format_score(sp.mean),
                    format_score(sp.stdev),
                    format_score(sp.low),
                    format_score(sp.high),
                ]
                for sp in spreads
            ],
        )
    lines.append("")
    for s in results.summary():
        lines.append(
            f"{s.metric}: mean {format_score(s.mean)}, {s.passed} passed, {s.failed} failed, "
            f"{s.not_evaluated} not evaluated"
            + (f" (threshold {s.threshold:g})" if s.threshold is not None else "")
        )
    if results.judge is not None:
        lines.append(judge_line(results.judge))
    found = results.reliability()
    if found is not None:
        lines.append(printable(found.line()))
    spent = results.usage()
    if spent is not None:
        lines.append(printable(spent.line()))
    lines.append(printable(results.verdict_line()))
    return "\n".join(lines) + "\n"
