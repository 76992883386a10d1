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


def test_yaml_nested_by_indentation_is_held_to_the_depth_limit(tmp_path: Path) -> None:
    """YAML block style nests with no bracket: the JSON text's cheap bracket count said
    nothing of it, and 151 levels were taken where JSON stops at 100."""
    deep = tmp_path / "deep.yaml"
    deep.write_text(
        "".join("  " * level + f"k{level}:\n" for level in range(150)) + "  " * 150 + "leaf: 1\n"
    )
    with pytest.raises(formats.FormatError, match="nested more than 100 levels"):
        formats.load(deep)
    shallow = tmp_path / "shallow.yaml"
    shallow.write_text(
        "".join("  " * level + f"k{level}:\n" for level in range(20)) + "  " * 20 + "x: 1\n"
    )
    with pytest.raises(formats.FormatError) as refused:
        formats.load(shallow)  # not an eval set, but refused for that, not for its depth
    assert "nested more than" not in str(refused.value)


def test_a_small_file_is_read_in_room_for_its_size_not_the_limit(tmp_path: Path) -> None:
    """read(n) makes room for n bytes first: reading each small eval set up to the 512 MiB
    stream limit took half a gigabyte of address space, so a command under a memory limit of
    a few hundred MiB failed with MemoryError before reading a case."""
    import subprocess
    import sys

    path = tmp_path / "small.json"
    path.write_text('{"eval_cases": []}')
    script = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({300 * 2**20}, {300 * 2**20}))\n"
        "from platform_eval.formats.reading import read_bytes\n"
        f"print(read_bytes({str(path)!r}, 2**30).decode())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '{"eval_cases": []}'


def test_a_file_that_grows_while_it_is_read_is_held_to_the_limit(tmp_path: Path) -> None:
    from platform_eval.formats.reading import _read_at_most

    path = tmp_path / "growing.json"
    path.write_bytes(b"x" * 10)
    with path.open("rb") as handle:
        path.write_bytes(b"x" * 100)  # larger than when its size was taken
        assert len(_read_at_most(handle, 10, 50)) == 51  # one past the limit: refused
    with path.open("rb") as handle:
        assert _read_at_most(handle, 100, 1000) == b"x" * 100
