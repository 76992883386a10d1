"""Files are read only when they are regular files, and only up to a limit (attack probe,
issue 27 Medium 10): a FIFO given to ``upload`` or ``validate`` used to hang, and a symlink to
``/dev/zero`` grew past gigabytes until MemoryError."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from platform_eval import formats, traces
from platform_eval.cli import main


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "cases.evalset.json"
    os.mkfifo(path)  # nobody writes to it: reading it would wait forever
    return path


def test_a_fifo_is_refused_by_name_not_waited_on(
    fifo: Path, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(formats.FormatError, match="is a FIFO: platform-eval reads only regular"):
        formats.load_eval_set(fifo)
    assert main(["validate", str(fifo)]) == 2
    assert f"{fifo}: $: is a FIFO" in capsys.readouterr().out
    assert main(["-q", "upload", str(fifo)]) == 2
    assert "is a FIFO" in capsys.readouterr().err


def test_a_device_behind_a_symlink_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "traces.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(formats.FormatError, match="is a device"):
        traces.load_traces([link])
    binary = tmp_path / "traces.pb"
    binary.symlink_to("/dev/zero")
    with pytest.raises(formats.FormatError, match="is a device"):
        traces.load_traces([binary])


def test_files_over_the_limit_are_refused_and_the_limit_is_configurable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.evalset.json"
    big.write_text('{"eval_set_id": "x", "eval_cases": []}' + " " * 3_000_000)
    monkeypatch.setenv("PLATFORM_EVAL_MAX_FILE_MB", "1")
    with pytest.raises(formats.FormatError, match="PLATFORM_EVAL_MAX_FILE_MB"):
        formats.load(big)
    # An upload reads an eval set a case at a time, under its own (larger) limit.
    monkeypatch.setenv("PLATFORM_EVAL_MAX_STREAM_MB", "2")
    with pytest.raises(formats.FormatError, match="more than the 2 MiB"):
        formats.stream.read_eval_cases(big)
    monkeypatch.setenv("PLATFORM_EVAL_MAX_STREAM_MB", "8")
    assert list(formats.stream.read_eval_cases(big)) == []
