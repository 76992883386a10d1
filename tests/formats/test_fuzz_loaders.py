"""Loaders, converters and trace readers return a result or raise our typed error, whatever
the file holds. Examples change each run; ``nox -s fuzz`` runs many more of them.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from fuzzing import SUFFIXES, exercise, json_values, mutated, read_seed, seed_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from platform_eval import formats, traces
from platform_eval.formats import FormatError

#: Per test (and per seed file); ``nox -s fuzz`` sets thousands.
EXAMPLES = int(os.environ.get("PLATFORM_EVAL_FUZZ_EXAMPLES", "30"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
SEEDS = seed_files(CORPUS)  # the shipped samples alone when the corpus is not beside us


def _write(data: Any, suffix: str) -> Path:
    descriptor, name = tempfile.mkstemp(suffix=suffix)
    with open(descriptor, "w", encoding="utf-8") as handle:
        if suffix == ".jsonl" and isinstance(data, list):
            handle.write("\n".join(json.dumps(row) for row in data))
        elif isinstance(data, str) and suffix != ".yaml":
            handle.write(data)
        else:
            handle.write(json.dumps(data))
    return Path(name)


def _run(data: Any, suffix: str) -> None:
    path = _write(data, suffix)
    try:
        exercise(path)
    finally:
        path.unlink()


@FUZZ
@given(data=json_values, suffix=st.sampled_from(SUFFIXES))
def test_any_json_value(data: Any, suffix: str) -> None:
    _run(data, suffix)


@pytest.mark.parametrize("seed", SEEDS, ids=[p.name for p in SEEDS])
@FUZZ
@given(choice=st.data())
def test_mutations_of_real_files(seed: Path, choice: st.DataObject) -> None:
    data = read_seed(seed)
    if data is None:
        pytest.skip(f"{seed.name} is not a file we read")
    suffix = "".join(seed.suffixes[-2:]) if seed.name.endswith(".evalset.json") else seed.suffix
    _run(choice.draw(mutated(data)), suffix)


@FUZZ
@given(raw=st.binary(max_size=200), suffix=st.sampled_from(SUFFIXES))
def test_any_bytes(raw: bytes, suffix: str) -> None:
    path = _write("", suffix)
    path.write_bytes(raw)
    try:
        exercise(path)
    finally:
        path.unlink()


@pytest.mark.slow
@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"eval_cases": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"resourceSpans": [{"scopeSpans": [{"spans": ' + "[" * 3000 + "]" * 3000 + "}]}]}",
        '{"a": "\ud800"}',
        b"\xff\xfe{}".decode("latin-1"),
        "- - - a: [",
    ],
    ids=["deep list", "deep eval_cases", "deep spans", "lone surrogate", "bom noise", "yaml"],
)
def test_deep_and_odd_files_are_format_errors(text: str, suffix: str) -> None:
    path = _write("", suffix)
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        exercise(path)
    finally:
        path.unlink()


def test_a_deep_file_names_the_file_and_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "deep.evalset.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(FormatError, match=r"deep\.evalset\.json.*nested"):
        formats.load(path)
    with pytest.raises(FormatError, match="nested"):
        traces.load_conversations(path)


@FUZZ
@given(raw=st.binary(max_size=300))
def test_any_protobuf_bytes(raw: bytes) -> None:
    path = _write("", ".pb")
    path.write_bytes(raw)
    try:
        traces.load_conversations(path)
    except FormatError:
        pass
    finally:
        path.unlink()


def test_a_file_above_the_size_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLATFORM_EVAL_MAX_FILE_MB", "0.01")
    big = tmp_path / "big.evalset.json"
    big.write_text(json.dumps({"eval_set_id": "x", "eval_cases": [], "pad": "x" * 20_000}))
    for read in (formats.load, traces.load_conversations):
        with pytest.raises(FormatError, match=r"big\.evalset\.json.*PLATFORM_EVAL_MAX_FILE_MB"):
            read(big)
    (problem,) = formats.validate(big)
    assert "PLATFORM_EVAL_MAX_FILE_MB" in problem.message
    protobuf = tmp_path / "big.pb"
    protobuf.write_bytes(b"\0" * 20_000)
    with pytest.raises(FormatError, match="MiB"):
        traces.load_conversations(protobuf)
    monkeypatch.setenv("PLATFORM_EVAL_MAX_FILE_MB", "1")
    assert formats.load(big).kind == formats.Kind.EVAL_SET
