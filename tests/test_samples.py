"""Every sample runs as a user would run it, and the README's example is the quick-start sample."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "samples").glob("*.py"))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_sample_runs(sample: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(sample)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_quickstart_prints_every_candidate_score() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "samples" / "quickstart.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    scores = {
        key: float(value)
        for key, value in (line.rsplit(" ", 1) for line in done.stdout.strip().splitlines())
    }
    # ROUGE-1: reference {it, is, sunni, in, pari}, response {sunni, in, pari, today}:
    # precision 3/4, recall 3/5. The golden is text only, so it expects no tool call.
    precision, recall = 3 / 4, 3 / 5
    assert scores == {
        "weather_agent exact_match": 0.0,
        "weather_agent response_match_score": pytest.approx(
            2 * precision * recall / (precision + recall)
        ),
        "weather_agent tool_trajectory_avg_score": 0.0,
        # The one rubric, TEXT_CONTAINS "Paris", is decided by the local judge: passed.
        "weather_agent rubric_based_final_response_quality_v1": 1.0,
    }


def test_readme_example_is_the_quickstart_sample() -> None:
    readme = (ROOT / "README.md").read_text()
    example = re.search(r"## Ten lines, offline\n\n```python\n(.*?)```", readme, re.S)
    assert example is not None
    assert example.group(1) in (ROOT / "samples" / "quickstart.py").read_text()


def test_offline_traces_sample_scores() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "samples" / "offline_traces.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert (
        lines[0] == "run EvaluationRunState.SUCCEEDED: 1 matched"
        or lines[0] == "run SUCCEEDED: 1 matched"
    )
    # The session made exactly the expected call; ROUGE-1: reference {it, is, sunni, in, pari},
    # response {it, s, sunni, in, pari, today}: P = 4/6, R = 4/5.
    assert lines[1] == "agent tool_trajectory_avg_score 1.000"
    precision, recall = 4 / 6, 4 / 5
    assert (
        lines[2]
        == f"agent response_match_score {2 * precision * recall / (precision + recall):.3f}"
    )
