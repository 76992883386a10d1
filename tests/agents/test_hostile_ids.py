"""Case ids a file name cannot be (``.``, ``..``, ``../../escape``, ...): saved by ``run --agent
--save-sessions`` and ``--save-traces`` and read back by ``run --traces``, every case is its own
visible file and is scored again; a case with no recording is never a pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

pytest.importorskip("google.adk")

from fake_gemini import FakeGemini

from platform_eval.cli import main

#: Hostile ids: hidden names, paths, names that clean up alike or differ only in case, reserved
#: device names, white space, names longer than a file name may be.
HOSTILE = [
    ".",
    "..",
    "../../escape",
    ".hidden",
    "...",
    "./x",
    "a/../b",
    "/etc/passwd",
    "CON",
    "con",
    " ",
    "\t",
    "a\\b",
    "~",
    "-rf",
    "é" * 3,
    "x" * 300,
]
CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}


def _hostile_set(folder: Path) -> Path:
    eval_set = json.loads((folder / "agents" / "travel.evalset.json").read_text())
    paris = next(c for c in eval_set["eval_cases"] if c["eval_id"] == "weather_paris")
    eval_set["eval_cases"] = [{**paris, "eval_id": eval_id} for eval_id in HOSTILE]
    path = folder / "hostile.evalset.json"
    path.write_text(json.dumps(eval_set))
    (folder / "eval_config.json").write_text(json.dumps(CONFIG))
    return path


def _rows(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["rows"]
    return rows


@pytest.mark.slow  # an agent run and two replays: CI runs it (.ci/run)
def test_hostile_case_ids_are_saved_visible_and_read_back_as_their_cases(
    agent_project: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    eval_set = str(_hostile_set(tmp_path))
    common = ["--config", "eval_config.json", "--threshold", "response_match_score=0.8"]
    ran = main(
        [
            "-q",
            "run",
            eval_set,
            "--agent",
            "agents/travel_agent",
            *common,
            "--format",
            "json",
            "--save-sessions",
            "sessions",
            "--save-traces",
            "traces",
        ]
    )
    assert ran == 0
    scores = {(r["evalCaseId"], r["metric"]): r["score"] for r in _rows(capsys)}
    assert {case for case, _ in scores} == set(HOSTILE)
    for folder in ("sessions", "traces"):
        files = sorted((tmp_path / folder).iterdir())
        assert len(files) == len(HOSTILE), [f.name for f in files]
        assert not [f.name for f in files if f.name.startswith(".")]
        assert main(["-q", "run", eval_set, "--traces", folder, *common, "--format", "json"]) == 0
        assert {(r["evalCaseId"], r["metric"]): r["score"] for r in _rows(capsys)} == scores
    assert not (tmp_path.parent / "escape").exists()


@pytest.mark.slow  # an agent run and a replay: CI runs it (.ci/run)
def test_a_case_whose_recording_is_missing_fails_the_gate(
    agent_project: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    eval_set = str(_hostile_set(tmp_path))
    common = ["--config", "eval_config.json", "--format", "json"]
    main(
        [
            "-q",
            "run",
            eval_set,
            "--agent",
            "agents/travel_agent",
            *common,
            "--save-sessions",
            "sessions",
        ]
    )
    capsys.readouterr()
    removed = {"..", "CON", " "}
    for path in (tmp_path / "sessions").iterdir():
        if unquote(json.loads(path.read_text())["id"]) in removed:
            path.unlink()
    assert main(["-q", "run", eval_set, "--traces", "sessions", *common]) == 1
    rows = _rows(capsys)
    unrecorded = [r for r in rows if r["status"] == "NOT_EVALUATED"]
    assert {r["evalCaseId"] for r in unrecorded} == removed
    assert all("no recorded conversation was paired" in r["explanation"] for r in unrecorded)
    assert len({r["evalCaseId"] for r in rows}) == len(HOSTILE)
