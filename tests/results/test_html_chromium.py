"""The HTML report in a real browser: Debian's headless Chromium renders it without a script or
console error, with the chart, the case table and each conversation in place."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from paths import SAMPLE_DATA

from platform_eval.cli import main

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
        "<b>no_apology</b>",
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
