"""RunResults as one self-contained HTML file: no script, no external style, font or image.

A summary first (the verdict, what judging cost, each metric's mean against its threshold, as a
bar chart and a table), the run's failure clusters (when it asked for loss analysis) linked to
their cases, the table of cases, failing ones first, and for each case its results, every rubric
verdict with the rubric's text and the judge's reasoning, and the conversation beside the golden
response. Failing cases are open, the others closed. The page is a Jinja2 template with
autoescaping (``templates/report.html.j2``): every value is text, never markup.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..types import AgentData
from ._templates import render
from .render import judge_line
from .status import Status, format_score

if TYPE_CHECKING:
    from .model import CaseRecord, Row, RunResults

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1f2328;max-width:1200px;
overflow-wrap:anywhere}
h1{font-size:22px;margin-top:4px}h2{font-size:18px;margin-top:28px}.label{color:#57606a;margin:0}
table{border-collapse:collapse;width:100%}.scroll{overflow-x:auto;max-width:100%}
th,td{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top;
overflow-wrap:anywhere}th{background:#f6f8fa}
.PASSED{color:#1a7f37;font-weight:600}.FAILED{color:#cf222e;font-weight:600}
.NOT_EVALUATED{color:#9a6700;font-weight:600}.NOT_CHECKED{color:#57606a;font-weight:600}
.NOT_APPLICABLE{color:#8c959f}.problems{color:#cf222e}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(280px,1fr));gap:16px}
.turn{border-left:3px solid #d0d7de;padding:2px 8px;margin:6px 0;overflow-wrap:anywhere}
.user{color:#0969da}.call,.resp{font-family:ui-monospace,monospace;font-size:12px;
white-space:pre-wrap;background:#f6f8fa;padding:2px 4px}.author,.id{color:#57606a;font-size:12px}
details{margin:8px 0;border:1px solid #d0d7de;border-radius:6px;padding:6px 10px}
summary{cursor:pointer;font-weight:600}.verdict{margin:2px 0;overflow-wrap:anywhere}
img.media{max-width:320px;max-height:240px;vertical-align:top;border:1px solid #d0d7de}
"""
#: Cases by how badly they went: failing ones first.
_RANK = {
    Status.FAILED: 0,
    Status.NOT_EVALUATED: 1,
    Status.NOT_CHECKED: 2,
    Status.PASSED: 3,
    Status.NOT_APPLICABLE: 4,
}
#: Lines of the failure message shown before "and N more".
_PROBLEMS = 10


def _chart(results: RunResults) -> dict[str, Any]:
    summaries = results.summary()
    # Labels are 12px text: about 7px a character, so the longest name fits before the bars.
    label = 12 + 7 * max((len(s.metric) for s in summaries), default=10)
    width, bar_height = label + 320, 22
    bars = []
    for index, s in enumerate(summaries):
        mean = s.mean or 0.0
        threshold = None
        if s.threshold is not None and 0 <= s.threshold <= 1:
            threshold = f"{label + (width - label) * s.threshold:.1f}"
        bars.append(
            {
                "metric": s.metric,
                "y": index * (bar_height + 6),
                "length": f"{(width - label) * max(0.0, min(mean, 1.0)):.1f}",
                "fill": {"PASSED": "#2da44e", "FAILED": "#cf222e", "NOT_CHECKED": "#8c959f"}.get(
                    s.status.value, "#bf8700"
                ),
                "score": format_score(s.mean),
                "threshold_x": threshold,
            }
        )
    height = max(1, len(summaries)) * (bar_height + 6)
    return {
        "label": label,
        "width": width,
        "height": height,
        "bar_height": bar_height,
        "bars": bars,
    }


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _turns(data: AgentData | str | None) -> list[list[dict[str, str]]] | str | None:
    """A conversation as the template shows it: per turn, its lines (text, calls, responses)."""
    if data is None or isinstance(data, str):
        return data
    turns = []
    for turn in data.turns or []:
        lines = []
        for event in turn.events or []:
            author = event.author or ""
            for part in (event.content.parts if event.content else None) or []:
                if part.function_call:
                    call = part.function_call
                    lines.append(
                        {
                            "kind": "call",
                            "author": author,
                            "name": call.name or "",
                            "args": _json(call.args or {}),
                        }
                    )
                elif part.function_response:
                    response = part.function_response
                    lines.append(
                        {
                            "kind": "response",
                            "name": response.name or "",
                            "value": _json(response.response or {}),
                        }
                    )
                elif part.text and not part.thought:
                    lines.append({"kind": "text", "author": author, "text": part.text})
                elif part.inline_data or part.file_data:
                    lines.append(_media(author, part))
        turns.append(lines)
    return turns


#: Media the page shows inline (never SVG, which can hold a script), up to MEDIA_BYTES each.
_SHOWN_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_PLAYED_AUDIO = frozenset({"audio/wav", "audio/x-wav", "audio/mpeg", "audio/mp3", "audio/ogg"})
MEDIA_BYTES = 512 * 1024


def _media(author: str, part: Any) -> dict[str, str]:
    """An image, a sound or a file of the conversation: shown or played inline as a data URI
    where it is an image or sound of a known type and small enough, else named."""
    if part.file_data:
        given = part.file_data
        what = f"{given.mime_type or 'a file'}: {given.file_uri or ''}".rstrip(": ")
        return {"kind": "file", "author": author, "text": what}
    blob = part.inline_data
    mime = (blob.mime_type or "").lower().split(";")[0].strip()
    data = blob.data or b""
    size = f"{len(data) / 1024:.0f} KiB" if len(data) >= 1024 else f"{len(data)} bytes"
    label = ", ".join(x for x in (blob.display_name, mime or "data", size) if x)
    kind = "image" if mime in _SHOWN_IMAGES else "audio" if mime in _PLAYED_AUDIO else "file"
    if kind == "file" or len(data) > MEDIA_BYTES:
        shown = label if kind == "file" else f"{label}: larger than the report shows"
        return {"kind": "file", "author": author, "text": shown}
    uri = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return {"kind": kind, "author": author, "text": label, "uri": uri}


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


def _threshold(value: float | None) -> str:
    return "-" if value is None else str(value)


def _case(
    case: str, rows: list[Row], metrics: list[str], conversation: CaseRecord | None
) -> dict[str, Any]:
    worst = _worst(rows)
    cells = [
        [
            {"status": r.status.value, "score": format_score(r.score)}
            for r in rows
            if r.metric == metric
        ]
        for metric in metrics
    ]
    verdicts = [
        {
            "status": v.status.value,
            "mark": v.mark,
            "candidate": r.candidate,
            "metric": r.metric,
            # The rubric's text; its id beside it, smaller (the id alone says little).
            "rubric": v.rubric or v.rubric_id or "",
            "rubric_id": v.rubric_id if v.rubric and v.rubric_id else "",
            "reasoning": v.reasoning or "",
        }
        for r in rows
        for v in r.verdicts
    ]
    shown = None
    if conversation is not None:
        shown = {
            "golden": _turns(conversation.golden),
            "candidates": [(name, _turns(data)) for name, data in conversation.candidates.items()],
        }
    return {
        "id": case,
        "worst": worst.value,
        "open": worst in (Status.FAILED, Status.NOT_EVALUATED),
        "cells": cells,
        "rows": [
            {
                "candidate": r.candidate,
                "metric": r.metric,
                "score": format_score(r.score),
                "threshold": _threshold(r.threshold),
                "status": r.status.value,
                "explanation": r.explanation or "",
            }
            for r in rows
        ],
        "verdicts": verdicts,
        "conversation": shown,
    }


def _problems(results: RunResults) -> list[str]:
    """The failure message's lines, each once with how often it came, the first few only."""
    if results.passed:
        return []
    counted = Counter(line.strip() for line in results.verdict_line().splitlines() if line.strip())
    lines = [f"{line} (x{n})" if n > 1 else line for line, n in counted.items()]
    if len(lines) > _PROBLEMS:
        lines = [*lines[:_PROBLEMS], f"and {len(lines) - _PROBLEMS} more (see the cases below)"]
    return lines


def _clusters(results: RunResults) -> list[dict[str, Any]]:
    """The run's failure clusters (its lossAnalysisConfig), each with its cases."""
    run = results.run
    analysed = (
        run.evaluation_results.loss_analysis_results if run and run.evaluation_results else None
    )
    case_of = {row.item: row.eval_case_id for row in results.rows}
    found = []
    for analysis in analysed or []:
        clusters = []
        for cluster in analysis.clusters or []:
            entry = cluster.taxonomy_entry
            names = dict.fromkeys(
                case_of.get(e.evaluation_item or "", e.evaluation_item or "")
                for e in cluster.examples or []
            )
            clusters.append(
                {
                    "l1": (entry.l1_category if entry else None) or "",
                    "l2": (entry.l2_category if entry else None) or "",
                    "count": cluster.item_count or 0,
                    "description": (entry.description if entry else None) or "",
                    "cases": [name for name in names if name],
                }
            )
        metric = analysis.config.metric if analysis.config else None
        found.append({"metric": metric or "", "clusters": clusters})
    return found


def _view(results: RunResults) -> Mapping[str, Any]:
    by_case = results.rows_by_case()
    metrics = results.metrics
    ordered = sorted(by_case.items(), key=lambda item: _RANK[_worst(item[1])])
    return {
        "style": _STYLE,
        "title": results.title,
        "verdict": results.verdict.value,
        "run_line": (
            results.run_line()
            if results.run is None
            else f"Run {results.run.name or ''}: {results.run.state}"
        ),
        "case_count": len(results.cases),
        "row_count": len(results.rows),
        "judge_line": judge_line(results.judge) if results.judge is not None else "",
        "problems": _problems(results),
        "chart": _chart(results),
        "summaries": [
            {
                "metric": s.metric,
                "mean": format_score(s.mean),
                "threshold": _threshold(s.threshold),
                "passed": s.passed,
                "failed": s.failed,
                "not_evaluated": s.not_evaluated,
                "status": s.status.value,
            }
            for s in results.summary()
        ],
        "spreads": [
            {
                "case": s.eval_case_id,
                "metric": s.metric,
                "candidates": s.candidates,
                "mean": format_score(s.mean),
                "stdev": format_score(s.stdev),
                "low": format_score(s.low),
                "high": format_score(s.high),
            }
            for s in results.spreads()
        ],
        "reliability": _reliability(results),
        "usage_line": spent.line() if (spent := results.usage()) is not None else None,
        "usage_missed": results.usage_misses(),
        "clusters": _clusters(results),
        "metrics": metrics,
        "cases": [
            _case(case, rows, metrics, results.conversations.get(case)) for case, rows in ordered
        ],
    }


def _reliability(results: RunResults) -> dict[str, Any] | None:
    """pass@k and pass^k of repeated runs, and each case's runs that passed."""
    found = results.reliability()
    if found is None:
        return None
    names = found.names()
    return {
        "line": found.line(),
        "names": names,
        "cases": [
            {
                "case": c.eval_case_id,
                "passed": f"{c.passed} of {c.runs}",
                "flaky": c.flaky,
                "quarantined": c.quarantined,
                "figures": [
                    format_score(c.pass_at(int(n[5:])) if n[4] == "@" else c.pass_hat(int(n[5:])))
                    for n in names
                ],
            }
            for c in found.cases
        ],
        "missed": results.reliability_misses(),
    }


def _labels(results: RunResults) -> dict[str, Any] | None:
    """The judged verdicts as a labels file to fill in (``judges agreement --labels``), as a
    link that downloads it: a data URI, so that the page stays without a script."""
    from .agreement import label_template

    template = label_template(results)
    if not template:
        return None
    return {
        "href": "data:application/x-ndjson;charset=utf-8," + quote(template, safe=""),
        "count": template.count("\n"),
        "run": results.run.id if results.run is not None and results.run.name else "RUN",
    }


def to_html(results: RunResults) -> str:
    return render("report.html.j2", **_view(results), labels=_labels(results))
