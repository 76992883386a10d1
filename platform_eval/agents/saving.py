"""Keeping what an agent run produced: each session as ADK's session JSON, each run's spans
as OTLP JSON. Both are what ``--traces`` reads, so a saved run is evaluated again, with the
same scores, without running the agent."""

from __future__ import annotations

import json
from pathlib import Path

from .running import AgentRunReport, CaseRun


def _file_stem(run: CaseRun, num_runs: int) -> str:
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in run.eval_id)[:80] or "case"
    return stem if num_runs == 1 else f"{stem}.run{run.run}"


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)


def save_sessions(report: AgentRunReport, folder: str | Path) -> list[Path]:
    """One ``<eval id>[.run<n>].json`` per finished run; returns the files written."""
    written = []
    for run in report.runs:
        if run.session is not None:
            path = Path(folder) / f"{_file_stem(run, report.num_runs)}.json"
            _write(path, run.session)
            written.append(path)
    return written


def save_traces(report: AgentRunReport, folder: str | Path) -> list[Path]:
    """One ``<eval id>[.run<n>].otlp.json`` per finished run with spans; returns the files."""
    written = []
    for run in report.runs:
        if run.session is not None and run.spans:
            path = Path(folder) / f"{_file_stem(run, report.num_runs)}.otlp.json"
            _write(path, run.spans)
            written.append(path)
    return written
