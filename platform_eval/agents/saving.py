"""Keeping what an agent run produced: each session as ADK's session JSON, each run's spans
as OTLP JSON. Both are what ``--traces`` reads, so a saved run is evaluated again, with the
same scores, without running the agent."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..traces.otel import SESSION_STATE_KEY
from .reports import AgentRunReport

#: The longest eval id kept whole in a file name.
_KEPT = 80


def _clean(eval_id: str) -> str:
    """The eval id as a file name: itself where it is one, else cleaned and marked with a
    digest of the id, so that ids that clean up alike (``a/b``, ``a:b``, ``a_b``, ids sharing
    their first 80 characters) never share a file. A name never starts with a dot: a hidden
    file is one a folder's reader passes over (``--traces DIR`` among them)."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in eval_id)[:_KEPT]
    if cleaned and cleaned == eval_id and not cleaned.startswith("."):
        return cleaned
    visible = "_" * (len(cleaned) - len(cleaned.lstrip("."))) + cleaned.lstrip(".")
    return f"{visible or 'case'}~{_digest(eval_id)}"


def _digest(eval_id: str) -> str:
    return hashlib.sha256(eval_id.encode()).hexdigest()[:10]


def _file_stems(report: AgentRunReport) -> dict[str, str]:
    """A file stem per run key, each distinct even where the file system ignores case."""
    stems: dict[str, str] = {}
    taken: dict[str, str] = {}
    for run in report.runs:
        stem = _clean(run.eval_id)
        other = taken.get(stem.casefold())
        if other is not None and other != run.eval_id:
            stem = f"{stem}~{_digest(run.eval_id)}"
        taken.setdefault(stem.casefold(), run.eval_id)
        stems[run.key] = stem if report.num_runs == 1 else f"{stem}.run{run.run}"
    return stems


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)


def save_sessions(report: AgentRunReport, folder: str | Path) -> list[Path]:
    """One ``<eval id>[.run<n>].json`` per finished run, and in live mode the agent's audio of
    each turn beside it (``<eval id>[.run<n>].turn<k>.wav``); returns the files written."""
    written = []
    stems = _file_stems(report)
    for run in report.runs:
        if run.session is not None:
            path = Path(folder) / f"{stems[run.key]}.json"
            _write(path, run.session)
            written.append(path)
            for turn, wav in sorted(run.audio.items()):
                audio = Path(folder) / f"{stems[run.key]}.turn{turn}.wav"
                partial = audio.with_name(audio.name + ".tmp")
                partial.write_bytes(wav)
                partial.replace(audio)
                written.append(audio)
    return written


def save_traces(report: AgentRunReport, folder: str | Path) -> list[Path]:
    """One ``<eval id>[.run<n>].otlp.json`` per finished run with spans; returns the files.
    The session's state at its end goes on its last invocation span (``SESSION_STATE_KEY``):
    google-adk keeps state out of its spans, and a replay scores the state as the run did."""
    written = []
    stems = _file_stems(report)
    for run in report.runs:
        if run.session is not None and run.spans:
            path = Path(folder) / f"{stems[run.key]}.otlp.json"
            _write(path, _with_state(run.spans, run.session))
            written.append(path)
    return written


def _with_state(spans: Any, session: dict[str, Any]) -> Any:
    """``spans`` (OTLP JSON) with the session's final state on the last invocation span."""
    state = session.get("state")
    if not isinstance(state, dict) or not isinstance(spans, dict):
        return spans
    kept = {k: v for k, v in state.items() if not str(k).startswith("temp:")}
    roots = [
        span
        for resource in spans.get("resourceSpans") or []
        for scope in resource.get("scopeSpans") or []
        for span in scope.get("spans") or []
        if not span.get("parentSpanId") and str(span.get("name", "")).startswith(_INVOCATIONS)
    ]
    if not roots:
        return spans
    last = max(roots, key=lambda span: int(span.get("startTimeUnixNano") or 0))
    value = {"stringValue": json.dumps(kept, ensure_ascii=False, sort_keys=True)}
    last["attributes"] = [
        *(a for a in last.get("attributes") or [] if a.get("key") != SESSION_STATE_KEY),
        {"key": SESSION_STATE_KEY, "value": value},
    ]
    return spans


#: The names of ADK's invocation spans (one per user message): 1.x, schema v1 and v2.
_INVOCATIONS = ("invocation", "invoke_workflow")
