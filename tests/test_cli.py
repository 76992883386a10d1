from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from platform_eval import Client
from platform_eval.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert "platform-eval" in capsys.readouterr().out


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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_emulator_start_serves_the_api(tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = _free_port()
    db = tmp_path / "cli.sqlite"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "platform_eval.cli",
            "emulator",
            "start",
            "--port",
            str(port),
            "--db",
            str(db),
            "--log-level",
            "warning",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/_emulator/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "emulator did not start"
            time.sleep(0.1)
        env_backup = os.environ.get("PLATFORM_EVAL_EMULATOR_HOST")
        os.environ["PLATFORM_EVAL_EMULATOR_HOST"] = f"127.0.0.1:{port}"
        try:
            with Client() as client:
                created = client.create_set(display_name="from the cli", items=[])
                assert client.get_set(created.id).display_name == "from the cli"
        finally:
            if env_backup is None:
                os.environ.pop("PLATFORM_EVAL_EMULATOR_HOST")
            else:
                os.environ["PLATFORM_EVAL_EMULATOR_HOST"] = env_backup
    finally:
        process.terminate()
        out, err = process.communicate(timeout=20)
    assert f"PLATFORM_EVAL_EMULATOR_HOST=127.0.0.1:{port}" in out
    assert "Traceback" not in err
    assert db.exists()


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
