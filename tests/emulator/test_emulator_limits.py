"""Every limit of the README's table can be changed: by an ``emulator start`` option, an
``Emulator(...)`` argument or an environment variable; a value that is not one is refused by
name, never silently replaced by the default."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from conftest import cli_emulator
from sockets import closed

from platform_eval import errors, formats
from platform_eval._json_limits import DEEPEST_ALLOWED, MAX_DEPTH
from platform_eval.cli import main
from platform_eval.emulator import Emulator
from platform_eval.emulator.limits import Limits
from platform_eval.formats.stream import read_eval_cases

#: A resource any small body makes (a set needs items, an item a payload).
EXPERIMENTS = "v1beta1/projects/p/locations/us-central1/evaluationExperiments"


def _nested(depth: int) -> dict[str, object]:
    value: object = "leaf"
    for _ in range(depth - 1):
        value = [value]
    return {"displayName": "deep", "metadata": {"x": value}}


def _create(url: str, body: object) -> httpx.Response:
    return httpx.post(f"{url}/{EXPERIMENTS}", content=json.dumps(body).encode(), timeout=10)


def _wide(values: int) -> dict[str, object]:
    return {"displayName": "wide", "metadata": {"x": [{} for _ in range(values)]}}


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_emulator_start_options_set_every_limit() -> None:
    options = ["--max-body-mb", "0.01", "--max-json-values", "200", "--max-json-depth", "8"]
    options += ["--first-request-seconds", "0.5", "--max-connections", "20"]
    with cli_emulator(*options) as running:
        url = running.url
        assert _create(url, _nested(5)).status_code == 200
        too_deep = _create(url, _nested(9))
        assert too_deep.status_code == 400 and "more than 8 levels" in too_deep.text
        # A `{}` in a list counts twice, as a member and as an object: 80 of them are 160 values.
        assert _create(url, _wide(80)).status_code == 200
        too_wide = _create(url, _wide(250))
        assert too_wide.status_code == 400 and "--max-json-values" in too_wide.text
        too_big = _create(url, {"displayName": "x" * 20_000})
        assert too_big.status_code == 400 and "10485 bytes" in too_big.text

        idle = [socket.create_connection(("127.0.0.1", running.port)) for _ in range(25)]
        time.sleep(0.3)
        assert sum(closed(sock) for sock in idle[20:]) == 5  # beyond the cap: closed at once
        time.sleep(0.5)
        assert all(closed(sock) for sock in idle[:20])  # sent nothing within 0.5 s
        assert httpx.get(f"{url}/_emulator/health").status_code == 200


def test_emulator_arguments_set_the_json_limits() -> None:
    with Emulator(max_json_values=200, max_json_depth=8) as emulator:
        assert emulator.limits == Limits(json_values=200, json_depth=8)
        assert _create(emulator.url, _nested(9)).status_code == 400
        assert _create(emulator.url, _wide(250)).status_code == 400
    # The defaults take both.
    with Emulator() as emulator:
        assert _create(emulator.url, _nested(9)).status_code == 200
        assert _create(emulator.url, _wide(250)).status_code == 200
        assert _create(emulator.url, _nested(MAX_DEPTH + 1)).status_code == 400


@pytest.mark.parametrize(
    ("argument", "value", "named"),
    [
        ("max_body_bytes", 0, "body_bytes"),
        ("max_json_values", -1, "json_values"),
        ("max_json_depth", DEEPEST_ALLOWED + 1, "json_depth"),
        ("first_request_seconds", float("nan"), "first_request_seconds"),
        ("max_connections", 1.5, "connections"),
    ],
)
def test_an_emulator_limit_out_of_range_is_refused_by_name(
    argument: str, value: float, named: str
) -> None:
    with pytest.raises(ValueError, match=f"^{named} must be"):
        Emulator(**{argument: value})


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--max-body-mb", "0", "a positive number of MiB"),
        ("--max-json-values", "none", "a whole number"),
        ("--max-json-depth", str(DEEPEST_ALLOWED + 1), f"at most {DEEPEST_ALLOWED}"),
        ("--first-request-seconds", "-1", "a positive number of seconds"),
        ("--max-connections", "0", "at least 1"),
    ],
)
def test_emulator_start_refuses_a_limit_out_of_range(
    option: str, value: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["emulator", "start", option, value])
    except SystemExit as exited:  # argparse's own refusal
        code = exited.code  # type: ignore[assignment]
    assert code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_the_depth_of_files_and_bodies_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / "deep.evalset.json"
    state: object = "leaf"
    for _ in range(120):
        state = {"k": state}
    case = {"eval_id": "c", "conversation": [], "session_input": {"state": state}}
    deep.write_text(json.dumps({"eval_set_id": "deep", "eval_cases": [case]}))
    with pytest.raises(formats.FormatError, match="PLATFORM_EVAL_MAX_JSON_DEPTH"):
        formats.load(deep)
    monkeypatch.setenv("PLATFORM_EVAL_MAX_JSON_DEPTH", "150")
    assert formats.load(deep) is not None
    with Emulator() as emulator:
        assert emulator.limits.json_depth == 150
        assert _create(emulator.url, _nested(140)).status_code == 200


def _load(path: Path) -> object:
    return formats.load(path)


def _stream(path: Path) -> object:
    return list(read_eval_cases(path))


@pytest.mark.parametrize(
    ("variable", "value", "reader"),
    [
        ("PLATFORM_EVAL_MAX_JSON_DEPTH", "deep", _load),
        ("PLATFORM_EVAL_MAX_JSON_DEPTH", "0", _stream),
        ("PLATFORM_EVAL_MAX_JSON_DEPTH", str(DEEPEST_ALLOWED + 1), _load),
        ("PLATFORM_EVAL_MAX_FILE_MB", "64MB", _load),
        ("PLATFORM_EVAL_MAX_FILE_MB", "-3", _load),
        ("PLATFORM_EVAL_MAX_STREAM_MB", "inf", _stream),
    ],
)
def test_a_limit_variable_that_is_not_a_number_is_an_error_naming_it(
    variable: str,
    value: str,
    reader: Callable[[Path], object],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Before, a typo in a size left the default in force without a word.
    evalset = tmp_path / "small.evalset.json"
    evalset.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "c"}]}))
    monkeypatch.setenv(variable, value)
    with pytest.raises(errors.ConfigurationError, match=variable):
        reader(evalset)


def test_the_cli_reports_a_bad_limit_variable_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    evalset = tmp_path / "small.evalset.json"
    evalset.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "c"}]}))
    monkeypatch.setenv("PLATFORM_EVAL_MAX_FILE_MB", "lots")
    assert main(["validate", str(evalset)]) == 2
    err = capsys.readouterr().err
    assert "PLATFORM_EVAL_MAX_FILE_MB must be a positive number, got 'lots'" in err
    assert "Traceback" not in err
