"""The soak (``nox -s soak``) in miniature, so that it keeps working: two emulators on one
database, three CLI runs at a time, SIGKILLs; every run must end SUCCEEDED with each result
once, or FAILED with a reason."""

from __future__ import annotations

import subprocess
import sys

import pytest
from paths import TOOLS

#: Emulators and CLI commands as processes: CI runs it, a newcomer's first run does not.
pytestmark = pytest.mark.slow

SOAK = TOOLS / "soak.py"


def test_a_short_soak_ends_with_every_run_finished_and_each_result_once() -> None:
    done = subprocess.run(
        [sys.executable, str(SOAK), "--rounds", "2", "--cases", "6", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every run finished" in done.stdout
    assert "SIGKILLs:" in done.stdout and "runs: {" in done.stdout
