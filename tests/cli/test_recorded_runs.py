"""``results RUN`` of runs shaped as the service answers them (issue 61): a run whose metadata
holds only the service's ``pipeline_id`` (every recorded run has one) recorded no thresholds,
and is never PASSED against any; a run with nothing to score is FAILED in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from platform_eval.cli import main
from platform_eval.target import connect


def _run_of(work: Path, candidates: list[dict[str, str]]) -> str:
    """A run made through the client (no thresholds of ours in its metadata); its name."""
    request = {"prompt": {"text": "q"}, "goldenResponse": {"text": "a"}}
    if candidates:
        request["candidateResponses"] = candidates  # type: ignore[assignment]
    with connect(db=work / ".platform-eval" / "emulator.sqlite") as target:
        client = target.client
        item = client.create_item(
            {"displayName": "i", "evaluationItemType": "REQUEST", "evaluationRequest": request}
        )
        made = client.create_set(display_name="s", items=[item])
        done = client.wait_for_run(client.create_run(evaluation_set=made, metrics=["exact_match"]))
    assert set(done.metadata) == {"pipeline_id"} and done.name
    return done.name


def test_a_run_with_only_the_service_s_metadata_is_never_passed(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = _run_of(work, [{"candidate": "x", "text": "a"}])
    assert main(["results", name]) == 0
    said = capsys.readouterr()
    assert "NOT CHECKED" in said.out and "PASSED" not in said.out
    assert "neither recorded with the run nor given" in said.out
    # The run's own summary, per candidate, in the JSON report.
    assert main(["-q", "results", name, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["runSummary"]["x"]["exact_match"]["AVERAGE"] == 1.0
    assert len(document["runSummary"]["x"]["exact_match"]) == 9


def test_a_run_with_nothing_to_score_fails_in_one_line(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = _run_of(work, [])
    assert main(["results", name]) == 1
    said = capsys.readouterr()
    (line,) = [text for text in said.out.splitlines() if "FAILED" in text]
    assert "No metric scores to aggregate" in line and "Traceback" not in said.err
