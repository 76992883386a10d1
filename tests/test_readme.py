"""Every Python block of the README and of the docs runs as pasted, in a folder laid out as they
assume (``tests/eval/...``, ``traces/``), against the embedded emulator or a running one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from platform_eval.emulator import Emulator

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "samples" / "data"
#: The README and the documentation site's pages.
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [
    block
    for document in DOCUMENTS
    for block in re.findall(r"```python\n(.*?)```", document.read_text(), re.S)
]


def _workspace(root: Path) -> Path:
    """A user's project as the README's examples name its files."""
    evalsets = root / "tests" / "eval" / "evalsets"
    evalsets.mkdir(parents=True)
    shutil.copy(DATA / "weather.evalset.json", evalsets / "basic.evalset.json")
    shutil.copy(DATA / "eval_config.json", root / "tests" / "eval" / "eval_config.json")
    shutil.copy(DATA / "weather.evalset.json", root / "helm.evalset.json")
    (root / "traces").mkdir()
    shutil.copy(DATA / "weather_traces.otlp.json", root / "traces" / "basic.otlp.json")
    shutil.copy(DATA / "weather_traces.otlp.json", root / "traces" / "helm.json")
    return root


def test_the_readme_has_its_python_examples() -> None:
    assert len(BLOCKS) >= 5


def test_the_readme_stays_short_and_links_only_pages_that_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 250
    for target in re.findall(r"\]\((docs/[^)#]*)", readme):
        assert (ROOT / target).exists(), target


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_readme_python_block_runs_as_pasted(
    index: int, tmp_path: Path, emulator: Emulator, project: str
) -> None:
    block = BLOCKS[index]
    work = _workspace(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "GOOGLE_CLOUD_PROJECT"}
    # A block that builds a Client() with no arguments reaches the emulator the way a user's
    # does: PLATFORM_EVAL_EMULATOR_HOST; the others use the embedded one.
    env["PLATFORM_EVAL_EMULATOR_HOST"] = emulator.host_port
    env["GOOGLE_CLOUD_PROJECT"] = project
    if block.lstrip().startswith("def test_"):
        (work / "test_readme_example.py").write_text(block)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore"]
        env.pop("PLATFORM_EVAL_EMULATOR_HOST")
        env.pop("GOOGLE_CLOUD_PROJECT")
    else:
        (work / "example.py").write_text(block)
        command = [sys.executable, "example.py"]
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"{block[:300]}\n---\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


def test_every_command_is_in_the_command_table() -> None:
    """docs/cli.md's table names every command the parser has."""
    import argparse

    from platform_eval.cli._arguments import parser

    found = parser()
    choices = next(a for a in found._actions if isinstance(a, argparse._SubParsersAction)).choices
    commands = list(choices)
    table = (ROOT / "docs" / "cli.md").read_text()
    missing = [name for name in commands if f"`{name}" not in table and f"\\|{name}" not in table]
    assert missing == []
