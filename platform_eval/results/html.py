"""RunResults as one self-contained HTML file: no script, no external style, font or image.

A summary per metric with a bar chart (inline SVG), the run's failure clusters (when it asked
for loss analysis) linked to their cases, a table of cases, and for each case the conversation
(user turns, tool calls with arguments and responses, final answers) beside the golden response
and every rubric verdict.
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any

from ..types import AgentData
from ._safe_text import no_bidi
from .model import Status, format_score
from .render import judge_line

if TYPE_CHECKING:
    from .model import CaseRecord, Row, RunResults

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1f2328;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px}table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}.PASSED{color:#1a7f37;font-weight:600}.FAILED{color:#cf222e;font-weight:600}
.NOT_EVALUATED{color:#9a6700;font-weight:600}.NOT_CHECKED{color:#57606a;font-weight:600}.NOT_APPLICABLE{color:#8c959f}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:16px}.turn{border-left:3px solid #d0d7de;
padding:2px 8px;margin:6px 0}.user{color:#0969da}.call,.resp{font-family:ui-monospace,monospace;
font-size:12px;white-space:pre-wrap;background:#f6f8fa;padding:2px 4px}.author{color:#57606a;
font-size:12px}details{margin:8px 0;border:1px solid #d0d7de;border-radius:6px;padding:6px 10px}
summary{cursor:pointer;font-weight:600}.verdict{margin:2px 0}pre{white-space:pre-wrap}
"""


def _chart(results: RunResults) -> str:
    summaries = results.summary()
    # Labels are 12px text: about 7px a character, so the longest name fits before the bars.
    label = 12 + 7 * max((len(s.metric) for s in summaries), default=10)
    width, bar_height = label + 320, 22
    rows = []
    for index, s in enumerate(summaries):
        y = index * (bar_height + 6)
        mean = s.mean or 0.0
        fill = {"PASSED": "#2da44e", "FAILED": "#cf222e", "NOT_CHECKED": "#8c959f"}.get(
            s.status.value, "#bf8700"
        )
        rows.append(
            f'<text x="0" y="{y + 16}" font-size="12">{escape(s.metric)}</text>'
            f'<rect x="{label}" y="{y}" width="{(width - label) * max(0.0, min(mean, 1.0)):.1f}"'
            f' height="{bar_height}" fill="{fill}"/>'
            f'<text x="{label + 4}" y="{y + 16}" font-size="12" fill="#fff">{format_score(s.mean)}'
            "</text>"
        )
        if s.threshold is not None and 0 <= s.threshold <= 1:
            x = label + (width - label) * s.threshold
            rows.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y - 2}" y2="{y + bar_height + 2}" '
                'stroke="#1f2328" stroke-width="2"/>'
            )
    height = max(1, len(summaries)) * (bar_height + 6)
    return (
        f'<svg role="img" aria-label="mean score per metric" width="{width}" height="{height}">'
        + "".join(rows)
        + "</svg>"
    )


def _json(value: Any) -> str:
    return escape(json.dumps(value, ensure_ascii=False, sort_keys=True))


def _agent_data(data: AgentData | str | None) -> str:
    if data is None:
        return "<p><em>none</em></p>"
    if isinstance(data, str):
        return f"<p>{escape(data)}</p>"
    out = []
    for turn in data.turns or []:
        parts = []
        for event in turn.events or []:
            author = escape(event.author or "")
            for part in (event.content.parts if event.content else None) or []:
                if part.function_call:
                    call = part.function_call
                    parts.append(
                        f'<div class="call"><span class="author">{author}</span> calls '
                        f"{escape(call.name or '')}({_json(call.args or {})})</div>"
                    )
                elif part.function_response:
                    response = part.function_response
                    parts.append(
                        f'<div class="resp">{escape(response.name or "")} returned '
                        f"{_json(response.response or {})}</div>"
                    )
                elif part.text and not part.thought:
                    css = "user" if event.author == "user" else ""
                    parts.append(
                        f'<div class="{css}"><span class="author">{author}:</span> '
                        f"{escape(part.text)}</div>"
                    )
        out.append(f'<div class="turn">{"".join(parts)}</div>')
    return "".join(out) or "<p><em>no turns</em></p>"


def _case_table(results: RunResults, by_case: dict[str, list[Row]]) -> str:
    """One line per case: its worst status and each metric's score, linked to its details."""
    metrics = results.metrics
    head = "".join(f"<th>{escape(m)}</th>" for m in metrics)
    lines = []
    for case, rows in by_case.items():
        cells = []
        for metric in metrics:
            mine = [r for r in rows if r.metric == metric]
            cells.append(
                "<td>"
                + " ".join(
                    f'<span class="{r.status.value}">{format_score(r.score)}</span>' for r in mine
                )
                + "</td>"
            )
        worst = _worst(rows)
        lines.append(
            f'<tr><td><a href="#case-{escape(case)}">{escape(case)}</a></td>'
            f'<td class="{worst.value}">{worst.value}</td>{"".join(cells)}</tr>'
        )
    return f"<table><tr><th>case</th><th>status</th>{head}</tr>{''.join(lines)}</table>"


def _worst(rows: list[Row]) -> Status:
    statuses = {r.status for r in rows}
    return next(
        (
            s
            for s in (Status.FAILED, Status.NOT_EVALUATED, Status.PASSED, Status.NOT_CHECKED)
            if s in statuses
        ),
        Status.NOT_APPLICABLE,
    )


def _case(case: str, rows: list[Row], conversation: CaseRecord | None) -> str:
    worst = _worst(rows)
    table = "".join(
        f"<tr><td>{escape(r.candidate)}</td><td>{escape(r.metric)}</td><td>{format_score(r.score)}</td>"
        f"<td>{'-' if r.threshold is None else r.threshold}</td>"
        f'<td class="{r.status.value}">{r.status.value}</td><td>{escape(r.explanation or "")}'
        "</td></tr>"
        for r in rows
    )
    verdicts = "".join(
        f'<div class="verdict"><span class="{v.status.value}">{v.mark}</span> '
        f"[{escape(r.candidate)}] {escape(r.metric)} "
        f"<b>{escape(v.rubric_id or '')}</b> {escape(v.rubric or '')}: "
        f"{escape(v.reasoning or '')}</div>"
        for r in rows
        for v in r.verdicts
    )
    body = (
        f"<table><tr><th>candidate</th><th>metric</th><th>score</th><th>threshold</th>"
        f"<th>status</th><th>explanation</th></tr>{table}</table>"
    )
    if verdicts:
        body += f"<h4>Rubric verdicts</h4>{verdicts}"
    if conversation is not None:
        columns = [f"<div><h4>Golden</h4>{_agent_data(conversation.golden)}</div>"]
        columns += [
            f"<div><h4>Candidate {escape(name)}</h4>{_agent_data(data)}</div>"
            for name, data in conversation.candidates.items()
        ]
        body += f'<div class="cols">{"".join(columns)}</div>'
    return (
        f'<details id="case-{escape(case)}"{" open" if worst != Status.PASSED else ""}>'
        f"<summary>{escape(case)} "
        f'<span class="{worst.value}">{worst.value}</span></summary>{body}</details>'
    )


def _spread_table(results: RunResults) -> str:
    """Per case and metric over its candidates (repeated runs): mean and spread."""
    spreads = results.spreads()
    if not spreads:
        return ""
    rows = "".join(
        f"<tr><td>{escape(s.eval_case_id)}</td><td>{escape(s.metric)}</td><td>{s.candidates}</td>"
        f"<td>{format_score(s.mean)}</td><td>{format_score(s.stdev)}</td>"
        f"<td>{format_score(s.low)}</td><td>{format_score(s.high)}</td></tr>"
        for s in spreads
    )
    return (
        "<h2>Per case, over its candidates</h2><table><tr><th>case</th><th>metric</th>"
        "<th>candidates</th><th>mean</th><th>stdev</th><th>min</th><th>max</th></tr>"
        f"{rows}</table>"
    )


def _clusters(results: RunResults) -> str:
    """The run's failure clusters (its lossAnalysisConfig), each linked to its cases."""
    run = results.run
    analysed = (
        run.evaluation_results.loss_analysis_results if run and run.evaluation_results else None
    )
    if not analysed:
        return ""
    case_of = {row.item: row.eval_case_id for row in results.rows}
    parts = []
    for analysis in analysed:
        metric = analysis.config.metric if analysis.config else None
        lines = []
        for cluster in analysis.clusters or []:
            entry = cluster.taxonomy_entry
            names = dict.fromkeys(
                case_of.get(e.evaluation_item or "", e.evaluation_item or "")
                for e in cluster.examples or []
            )
            links = ", ".join(f'<a href="#case-{escape(c)}">{escape(c)}</a>' for c in names if c)
            lines.append(
                f"<tr><td>{escape((entry.l1_category if entry else None) or '')}</td>"
                f"<td>{escape((entry.l2_category if entry else None) or '')}</td>"
                f"<td>{cluster.item_count or 0}</td>"
                f"<td>{escape((entry.description if entry else None) or '')}</td>"
                f"<td>{links}</td></tr>"
            )
        parts.append(
            f"<h2>Failure clusters of {escape(metric or '')}</h2><table><tr><th>L1</th>"
            "<th>L2</th><th>count</th><th>description</th><th>cases</th></tr>"
            + ("".join(lines) or "<tr><td colspan=5>no failures to cluster</td></tr>")
            + "</table>"
        )
    return "".join(parts)


def _run_html(results: RunResults) -> str:
    if results.run is None:
        return escape(results.run_line())
    return f"Run <code>{escape(results.run.name or '')}</code>: {escape(str(results.run.state))}"


def to_html(results: RunResults) -> str:
    # A bidi override in a case id or an answer would reverse the report's text around it:
    # written out, the whole document over (an entity would still be obeyed).
    return no_bidi(_document(results))


def _document(results: RunResults) -> str:
    verdict = results.verdict.value
    summary_rows = "".join(
        f"<tr><td>{escape(s.metric)}</td><td>{format_score(s.mean)}</td>"
        f"<td>{'-' if s.threshold is None else s.threshold}</td><td>{s.passed}</td>"
        f'<td>{s.failed}</td><td>{s.not_evaluated}</td><td class="{s.status.value}">'
        f"{s.status.value}</td></tr>"
        for s in results.summary()
    )
    by_case = results.rows_by_case()
    case_table = _case_table(results, by_case)
    cases = "".join(
        _case(case, rows, results.conversations.get(case)) for case, rows in by_case.items()
    )
    title = f"platform-eval: {escape(results.title)}"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>{_STYLE}</style></head><body>"
        f'<h1>{title} <span class="{verdict}">{verdict}</span></h1>'
        + f"<p>{_run_html(results)}, {len(results.cases)} cases, {len(results.rows)} results.</p>"
        + (f"<p>{escape(judge_line(results.judge))}</p>" if results.judge is not None else "")
        + ("" if results.passed else f"<pre>{escape(results.verdict_line())}</pre>")
        + f"<h2>Metrics</h2>{_chart(results)}<table><tr><th>metric</th><th>mean</th>"
        "<th>threshold</th><th>passed</th><th>failed</th><th>not evaluated</th><th>status</th>"
        f"</tr>{summary_rows}</table>{_spread_table(results)}{_clusters(results)}"
        f"<h2>Cases</h2>{case_table}{cases}</body></html>\n"
    )
