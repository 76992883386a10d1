"""The chaos run (``nox -s chaos``) in miniature, so that it keeps working: a few rounds of
faults and SIGKILLs, then the server's set must match the file exactly."""

from __future__ import annotations

import subprocess
import sys

import pytest
from paths import TOOLS

#: Rounds of faults and SIGKILLs: CI runs it, a newcomer's first run does not.
pytestmark = pytest.mark.slow

CHAOS = TOOLS / "chaos.py"


def test_a_short_chaos_run_ends_with_the_set_matching_the_file() -> None:
    done = subprocess.run(
        [sys.executable, str(CHAOS), "--rounds", "3", "--cases", "8", "--seed", "11"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "final state: set == file" in done.stdout
    assert "faults:" in done.stdout and "SIGKILLs:" in done.stdout
