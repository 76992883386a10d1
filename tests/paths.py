"""Where the tests' files are, for test modules at any depth of ``tests/``."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
#: The samples' data and agents, which tests run as a user would.
SAMPLE_DATA = ROOT / "samples" / "data"
SAMPLE_AGENTS = ROOT / "samples" / "agent"
TOOLS = ROOT / "tools"
#: The project's own fixtures.
TEST_DATA = TESTS / "data"
RECORDINGS = TESTS / "recordings"
