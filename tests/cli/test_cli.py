from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import cli_emulator
from factories import request_item
from sockets import answering

from platform_eval import Client
from platform_eval.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert "platform-eval" in capsys.readouterr().out


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_the_program_leaves_what_it_holds_out_of_the_last_collection() -> None:
    """``platform-eval`` (the console script, through ``_launcher``, and ``python -m
    platform_eval.cli``) is ``main()`` then ``gc.freeze()``: the interpreter's walk of every
    object at exit cost 0.70 s after an agent run of 200 cases. ``main()`` itself leaves the
    collector alone."""
    import tomllib

    from paths import ROOT

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["platform-eval"] == "platform_eval._launcher:program"
    probe = (
        "import gc, sys\n"
        "from platform_eval._launcher import program\n"
        "from platform_eval.cli import main\n"
        "sys.argv = ['platform-eval']\n"
        "assert main([]) == 2 and gc.get_freeze_count() == 0\n"
        "print(program(), gc.get_freeze_count() > 0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.split() == ["2", "True"], done.stderr


def test_usage_errors_exit_2_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["no-such-command"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and "Traceback" not in err
    assert main([]) == 2


def test_bad_port_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["emulator", "start", "--port", "70000"]) == 2
    assert "--port" in capsys.readouterr().err


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_emulator_start_serves_the_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "cli.sqlite"
    with cli_emulator("--db", str(db)) as running:
        monkeypatch.setenv("PLATFORM_EVAL_EMULATOR_HOST", f"127.0.0.1:{running.port}")
        with Client() as client:
            item = client.create_item(request_item("x"))
            created = client.create_set(display_name="from the cli", items=[item])
            assert client.get_set(created.id).display_name == "from the cli"
    assert f"PLATFORM_EVAL_EMULATOR_HOST=127.0.0.1:{running.port}" in running.out
    assert "Traceback" not in running.err
    assert db.exists()


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_port_in_use_is_reported_without_traceback() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "platform_eval.cli", "emulator", "start", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("argv", "expect"),
    [
        (
            ["run", "x.evalset.json", "--judge-model", "m", "--project", "p"],
            {"judge_model": "m", "project": "p", "command": "run"},
        ),
        (["runs", "list", "--project", "p", "-q"], {"project": "p", "quiet": True}),
        (
            ["compare", "A", "B", "--pairwise", "--judge-model", "gemini-2.5-flash"],
            {"judge_model": "gemini-2.5-flash", "pairwise": True},
        ),
        (
            ["--project", "p", "--replay-only", "run", "x.evalset.json"],
            {"project": "p", "replay_only": True, "judge_model": None},
        ),
        (["--project", "before", "results", "R", "--project", "after"], {"project": "after"}),
        (
            ["emulator", "start", "--judge-model", "m", "--debug"],
            {"judge_model": "m", "debug": True},
        ),
    ],
)
def test_global_flags_are_taken_before_or_after_the_command(
    argv: list[str], expect: dict[str, Any]
) -> None:
    from platform_eval.cli._arguments import parser as _parser

    args = vars(_parser().parse_args(argv))
    assert {key: args[key] for key in expect} == expect
    # Every global option has its value (or its default) whichever side it was given on.
    for name in ("project", "location", "endpoint", "quiet", "debug", "judge_cache"):
        assert name in args


def test_validate_checks_a_config_as_run_does_and_suggests_what_was_meant(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = {
        "criteria": {
            "tool_trajectory_avg_score": {
                "threshold": 1.0,
                "args_match": {"get_weather": {"city": "case_insensitve"}},
            },
            "respnse_match_score": 0.5,
        }
    }
    (work / "typos.json").write_text(json.dumps(config))
    assert main(["-q", "validate", "typos.json"]) == 2
    out = capsys.readouterr().out
    assert "unknown rule 'case_insensitve' (did you mean 'case_insensitive'?)" in out
    assert "did you mean 'response_match_score'" in out
    run = ["-q", "run", "data/weather.evalset.json", "--config", "typos.json"]
    assert main(run) == 2  # run refuses the same file
    assert "case_insensitve" in capsys.readouterr().err


def test_a_wrong_field_beside_a_right_one_names_only_the_wrong_one(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """intermediate_data is one of two shapes: the problems are those of the shape the case
    is closest to, so its valid tool_uses is not called unknown; a misspelled key gets a
    did-you-mean."""
    eval_set = json.loads((work / "data" / "weather.evalset.json").read_text())
    data = eval_set["eval_cases"][0]["conversation"][0]["intermediate_data"]
    data["intermediate_responses"] = "oops"
    data["tool_usess"] = []
    (work / "odd.evalset.json").write_text(json.dumps(eval_set))
    assert main(["validate", "odd.evalset.json"]) == 2
    captured = capsys.readouterr()
    where = "odd.evalset.json: $.eval_cases[0].conversation[0].intermediate_data"
    assert captured.out.splitlines() == [
        f"{where}.intermediate_responses: Input should be a valid list",
        f"{where}.tool_usess: unknown field (did you mean 'tool_uses'?)",
    ]
    assert "error: 2 problems in 1 file" in captured.err
    assert main(["-q", "run", "odd.evalset.json", "--metrics", "exact_match"]) == 2
    assert "tool_uses: unknown" not in capsys.readouterr().err  # run reads it alike


@pytest.mark.parametrize(
    ("endpoint", "said"),
    [
        (
            "http//localhost:8765",
            "a ':' is missing after http (did you mean http://localhost:8765?)",
        ),
        ("localhost:99999", "'http://localhost:99999' is not a host[:port]"),
        ("http://127.0.0.1:port", "'http://127.0.0.1:port' is not a host[:port]"),
    ],
)
def test_an_endpoint_that_is_no_address_is_named_as_such(
    work: Path, capsys: pytest.CaptureFixture[str], endpoint: str, said: str
) -> None:
    assert main(["-q", "--endpoint", endpoint, "runs", "list"]) == 2
    assert said in capsys.readouterr().err


def test_a_web_server_on_the_endpoint_is_named_as_neither_emulator_nor_service(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = b"<!DOCTYPE HTML><html><body>Not found</body></html>"
    with answering(404, "text/html; charset=utf-8", page) as endpoint:
        code = main(["-q", "--endpoint", endpoint, "runs", "list"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "DOCTYPE" not in err  # the page is not the message
    assert f"http://{endpoint} answered with text/html, not a Google API " in err
    assert "neither the emulator nor the service" in err


def test_an_https_endpoint_without_credentials_says_the_emulator_is_http(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No Application Default Credentials anywhere google-auth looks.
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(work / "none.json"))
    assert main(["-q", "--endpoint", "https://127.0.0.1:8799", "runs", "list"]) == 2
    err = capsys.readouterr().err
    assert "no Google Cloud credentials found" in err
    assert "https://127.0.0.1:8799 is https, so it is taken for the service" in err
    assert "an emulator there is reached over http" in err


def test_a_misspelled_agent_folder_is_called_missing(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "my_agent").mkdir()
    run = ["-q", "run", "data/weather.evalset.json", "--metrics", "exact_match"]
    assert main([*run, "--agent", "my_agnet"]) == 2
    assert "--agent my_agnet: no such folder or file (did you mean 'my_agent'?)" in (
        capsys.readouterr().err
    )


def test_validate_on_a_folder_of_no_readable_file_says_so_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    folder = tmp_path / "odd"
    folder.mkdir()
    os.mkfifo(folder / "pipe")
    (folder / "zero.json").symlink_to("/dev/zero")
    assert main(["validate", str(folder)]) == 2
    out = capsys.readouterr().out
    assert f"skipped: {folder / 'pipe'}: not a regular file" in out
    assert f"skipped: {folder / 'zero.json'}: not a regular file" in out
    assert "no file platform-eval reads, nothing validated" in out


def test_emulator_start_on_port_0_says_the_port_the_system_chose() -> None:
    """It printed ``http://127.0.0.1:0``: said before the socket was bound."""
    import httpx

    command = [sys.executable, "-m", "platform_eval.cli", "emulator", "start", "--port", "0"]
    process = subprocess.Popen(
        [*command, "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        said, export = process.stdout.readline(), process.stdout.readline()
        address = export.strip().removeprefix("export PLATFORM_EVAL_EMULATOR_HOST=")
        host, port = address.rsplit(":", 1)
        assert host == "127.0.0.1" and int(port) > 0
        assert said.startswith(f"platform-eval emulator on http://{address} ")
        deadline = time.monotonic() + 20
        while True:  # bound, and answering once uvicorn has started
            try:
                assert httpx.get(f"http://{address}/_emulator/health").status_code == 200
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "emulator did not answer"
                time.sleep(0.05)
    finally:
        process.terminate()
        process.communicate(timeout=20)
