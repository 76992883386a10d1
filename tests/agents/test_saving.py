"""Saved sessions and traces: one file per run, whatever the case ids clean up to."""

from __future__ import annotations

import json
from pathlib import Path

from platform_eval.agents.reports import AgentRunReport, CaseRun
from platform_eval.agents.saving import save_sessions, save_traces

#: Ids that clean up to the same file name, that share their first 80 characters, that differ
#: only in case (one file on a case-blind file system), and names a file cannot have.
IDS = ["a/b", "a_b", "a:b", "x" * 90 + "1", "x" * 90 + "2", "Paris", "paris", "..", ""]
IDS += [".", "...", ".hidden", "_hidden", "../../escape"]  # hidden names a folder's reader skips


def _report(num_runs: int = 1) -> AgentRunReport:
    runs = [
        CaseRun(
            eval_id,
            run,
            session={"id": eval_id, "appName": "app", "userId": "u", "events": []},
            spans={"resourceSpans": [{"case": eval_id, "run": run}]},
        )
        for eval_id in IDS
        for run in range(1, num_runs + 1)
    ]
    return AgentRunReport(runs=runs, num_runs=num_runs)


def test_every_run_is_its_own_file_and_reads_back_as_its_case(tmp_path: Path) -> None:
    for num_runs in (1, 2):
        folder = tmp_path / f"runs{num_runs}"
        sessions = save_sessions(_report(num_runs), folder / "sessions")
        traces = save_traces(_report(num_runs), folder / "traces")
        expected = len(IDS) * num_runs
        assert len(sessions) == len(traces) == expected
        # Distinct even for a file system that ignores case.
        assert len({path.name.casefold() for path in sessions}) == expected
        assert len(list((folder / "sessions").iterdir())) == expected
        assert not [path.name for path in sessions + traces if path.name.startswith(".")]
        read_back = sorted(json.loads(path.read_text())["id"] for path in sessions)
        assert read_back == sorted(IDS * num_runs)
        spans = {
            (s["case"], s["run"])
            for p in traces
            for s in json.loads(p.read_text())["resourceSpans"]
        }
        assert len(spans) == expected


def test_an_id_that_is_a_file_name_keeps_it(tmp_path: Path) -> None:
    report = AgentRunReport(runs=[CaseRun("weather_paris", 1, session={"id": "w"})], num_runs=1)
    [path] = save_sessions(report, tmp_path)
    assert path.name == "weather_paris.json"
