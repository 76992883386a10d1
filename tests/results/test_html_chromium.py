"""The HTML report in a real browser: Debian's headless Chromium renders it without a script or
console error, with the chart, the case table and each conversation in place; at 1280 x 800 it
has no horizontal scroll, whatever the case ids and answers, and 50 cases make a page of sane
height (the passing ones closed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from paths import SAMPLE_DATA

from platform_eval.cli import main
from platform_eval.results import Row, RunResults, Verdict
from platform_eval.types import EvaluationRun

DATA = SAMPLE_DATA
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

if CHROMIUM is None and os.environ.get("PLATFORM_EVAL_REQUIRE_CHROMIUM"):
    pytest.fail("PLATFORM_EVAL_REQUIRE_CHROMIUM is set and chromium is not installed")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="needs Debian's chromium (.ci/run installs it: apt-get install chromium)",
)


def _chromium(*args: str, page: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_report_renders_in_chromium(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("PLATFORM_EVAL_EMULATOR_HOST", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    report = tmp_path / "report.html"
    code = main(
        [
            "-q",
            "run",
            str(DATA / "weather.evalset.json"),
            "--traces",
            str(DATA / "weather_traces.otlp.json"),
            "--config",
            str(DATA / "eval_config.json"),
            "--threshold",
            "response_match_score=0.99",  # one failure, so its case is open in the page
            "--output",
            str(report),
        ]
    )
    assert code == 1
    capsys.readouterr()

    dom = _chromium("--dump-dom", page=report)
    assert dom.returncode == 0, dom.stderr
    for fragment in (
        '<svg role="img" aria-label="mean score per metric"',
        '<a href="#case-paris-then-oslo">paris-then-oslo</a>',
        '<details id="case-paris-then-oslo" open="">',
        "weather_agent</span> calls get_weather",
        '<span class="id">(no_apology)</span>',
        "Candidate agent",
    ):
        assert fragment in dom.stdout
    console = [
        line
        for line in dom.stderr.splitlines()
        if "CONSOLE" in line or "Uncaught" in line or "SyntaxError" in line
    ]
    assert console == [], console

    shot = tmp_path / "report.png"
    done = _chromium("--window-size=1280,1600", f"--screenshot={shot}", page=report)
    assert done.returncode == 0, done.stderr
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 20_000  # a page with content, not blank


def _layout(report: Path, tmp_path: Path) -> dict[str, int]:
    """The page's scroll width and height at 1280 x 800: a copy of the report with a script
    that writes them into the DOM (the report itself has no script)."""
    measured = tmp_path / "measured.html"
    script = (
        "<script>addEventListener('load', () => {const e = document.documentElement;"
        "document.body.dataset.width = e.scrollWidth; document.body.dataset.height = "
        "e.scrollHeight; let over = 0; for (const d of document.querySelectorAll('.scroll')) "
        "{over = Math.max(over, d.scrollWidth - d.clientWidth);} "
        "document.body.dataset.over = over;});</script>"
    )
    measured.write_text(report.read_text().replace("</body>", script + "</body>"))
    dom = _chromium("--window-size=1280,800", "--dump-dom", page=measured)
    assert dom.returncode == 0, dom.stderr
    found = re.search(r'data-width="(\d+)" data-height="(\d+)" data-over="(\d+)"', dom.stdout)
    assert found, dom.stdout[:500]
    return {
        "width": int(found.group(1)),
        "height": int(found.group(2)),
        "over": int(found.group(3)),
    }


def _fifty_cases() -> RunResults:
    run = EvaluationRun.model_validate({"name": "projects/p/locations/l/evaluationRuns/1"})
    run.state = "SUCCEEDED"  # type: ignore[assignment]
    metrics = [f"rubric_based_final_response_quality_v{n}_with_a_long_name" for n in range(6)]
    rows = []
    for n in range(50):
        case = f"case-{n}" if n % 10 else f"case-{n}-with_no_break_" + "x" * 150
        for metric in metrics:
            score = 0.2 if n in (7, 23, 41) else 0.9
            explanation = "an explanation with no space " + "y" * 300
            verdicts = (Verdict("r1", "The answer names the city " + "z" * 200, score > 0.5, "ok"),)
            rows.append(
                Row(case, f"i{n}", None, "agent", metric, score, 0.5, explanation, verdicts)
            )
    return RunResults(run, rows)


@pytest.mark.slow
def test_fifty_cases_fit_1280_pixels_with_the_failing_ones_open(tmp_path: Path) -> None:
    report = tmp_path / "fifty.html"
    report.write_text(_fifty_cases().to_html())
    html = report.read_text()
    assert html.count("<details") == 50 and html.count(" open>") == 3
    # The failing cases come first.
    assert html.index('id="case-case-41"') < html.index('id="case-case-0-')
    layout = _layout(report, tmp_path)
    assert layout["width"] <= 1280, layout
    # No table wider than its box: nothing hidden behind a scroll bar (unbroken ids, long
    # metric names and explanations wrap in their cells).
    assert layout["over"] <= 1, layout
    assert layout["height"] < 12_000, layout  # 47 closed cases, 3 open ones, the tables
