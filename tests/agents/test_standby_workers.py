"""The ``platform-eval`` command starts its agent's worker processes before it imports the rest
of itself (``_launcher``, ``_standby``): the worker pool takes them over, and kills those the
run does not use. ``import platform_eval`` stays light for it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_script import write_travel_agent

from platform_eval import _launcher, _standby


@pytest.fixture(autouse=True)
def no_standby_left() -> Iterator[None]:
    yield
    _standby.release()


@pytest.mark.parametrize(
    ("argv", "wanted"),
    [
        (["run", "set.evalset.json", "--agent", "app/"], 3),  # auto: up to the cores, 4 at most
        (["run", "set.evalset.json", "--agent=app/", "--agent-processes", "3"], 2),
        (["-q", "run", "set.evalset.json", "--agent", "app/", "--agent-processes=1"], 0),
        (["generate", "d-dataset.json", "--agent", "app/"], 3),
        (["run", "set.evalset.json", "--traces", "traces/"], 0),  # no agent
        (["upload", "set.evalset.json", "--agent", "app/"], 0),  # no agent runs
        (["run", "--agent", "app/", "--help"], 0),
        (["run", "set.evalset.json", "--agent", "app/", "--agent-processes", "many"], 0),
        (["run", "set.evalset.json", "--agent"], 0),  # the command says what is missing
    ],
)
def test_the_launcher_starts_workers_for_an_agent_run_only(
    argv: list[str], wanted: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_standby, "usable_cores", lambda: 8)
    assert _launcher.workers_wanted(argv) == wanted


def test_auto_starts_as_many_workers_as_the_eval_set_s_runs_take(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read from the eval set file (or an agents-cli dataset): a short run starts no worker."""
    monkeypatch.setattr(_standby, "usable_cores", lambda: 8)
    monkeypatch.chdir(tmp_path)
    Path("eval_config.json").write_text(json.dumps({"criteria": {"response_match_score": 1}}))
    for name, cases in (("four.evalset.json", 4), ("sixty-dataset.json", 60)):
        Path(name).write_text(
            json.dumps({"eval_cases": [{"eval_id": str(i)} for i in range(cases)]})
        )

    def wanted(*argv: str) -> int:
        return _launcher.workers_wanted(["run", *argv, "--agent", "app/"])

    assert wanted("--config", "eval_config.json", "four.evalset.json") == 0
    assert wanted("four.evalset.json", "--num-runs", "30") == 3  # 120 runs: 4 processes
    assert wanted("sixty-dataset.json") == 1  # 60 runs: two processes' worth
    assert wanted("sixty-dataset.json", "--agent-processes", "1") == 0
    # A number beyond the runs (a typo for the cases at once) starts a worker per run at most.
    assert wanted("four.evalset.json", "--agent-processes", "50") == 3
    assert wanted("sixty-dataset.json", "--agent-processes", "50") == 49
    Path("broken.evalset.json").write_text("{")
    assert wanted("broken.evalset.json") == 3  # not read here: the command says what is wrong


def test_auto_starts_no_worker_on_one_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_standby, "usable_cores", lambda: 1)
    assert _launcher.workers_wanted(["run", "set.evalset.json", "--agent", "app/"]) == 0


def test_import_platform_eval_imports_neither_the_client_nor_google_genai() -> None:
    code = (
        "import sys, platform_eval as pe; "
        "light = not {'google.genai', 'platform_eval.client'} & set(sys.modules); "
        "print(light, pe.Client.__name__, pe.types.AgentData.__name__, pe.connect.__name__, "
        "'Client' in dir(pe))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "Client", "AgentData", "connect", "True"]
    import platform_eval

    with pytest.raises(AttributeError, match="no attribute 'Clinet'"):
        _ = platform_eval.Clinet  # type: ignore[attr-defined]


def test_the_package_s_three_lists_of_public_names_agree() -> None:
    """``__all__``, the lazy ``_WHERE`` map and the ``TYPE_CHECKING`` imports mypy reads name
    the same things from the same modules: a name added to one list only would be missing
    from ``import *``, fail on first use, or be invisible to type checkers."""
    import ast

    import platform_eval

    tree = ast.parse(Path(platform_eval.__file__).read_text())
    checked = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    typed: dict[str, str] = {}
    for statement in checked.body:
        assert isinstance(statement, ast.ImportFrom)
        for alias in statement.names:
            module = "." * statement.level + (statement.module or "")
            typed[alias.name] = module if statement.module else module + alias.name
    assert typed == platform_eval._WHERE
    assert set(platform_eval.__all__) == set(typed) | {"__version__"}
    for name in platform_eval.__all__:
        assert getattr(platform_eval, name) is not None, name


def test_a_worker_the_command_does_not_use_is_killed(tmp_path: Path) -> None:
    """A usage error, here before any agent loads: the launcher kills the worker it started."""
    done = _launched(tmp_path, ["run", "set.evalset.json", "--agent", "app/"], workers="1")
    assert done.stdout.strip() == f"2 [{-signal.SIGKILL}]"
    assert "no metrics" in done.stderr


#: The travel agent's tool, writing down the process that ran it.
COUNTED = """
    import os
    _quiet = get_weather
    def get_weather(city: str) -> dict:
        '''Returns today's forecast for a city.'''
        with open("pids.txt", "a") as pids:
            pids.write(f"{os.getpid()}\\n")
        return _quiet(city)
    root_agent.tools[0] = get_weather
    """


@pytest.mark.slow  # a worker process of its own: CI runs it
def test_the_pool_takes_over_a_worker_the_command_started(
    agent_project: object, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from platform_eval.cli import main

    caplog.set_level(logging.DEBUG, logger="platform_eval.agents")

    Path("eval_config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.8}}))
    write_travel_agent("counted_agent", COUNTED)
    _standby.start(1)
    [standby] = _standby._waiting
    code = main(
        [
            "-q", "run", "agents/travel.evalset.json", "--agent", "counted_agent",
            "--config", "eval_config.json", "--num-runs", "6", "--agent-processes", "2",
            "--format", "json",
        ]
    )  # fmt: skip
    assert code == 1  # weather_oslo misses its threshold, as in one process
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 4 * 6
    assert _standby._waiting == []
    # The cases ran here and in the worker started before the command (the one pool worker).
    assert set(Path("pids.txt").read_text().split()) == {str(os.getpid()), str(standby.pid)}
    assert standby.wait(10) == 0  # it ended when its stdin closed
    assert "1 worker processes: 1 started with the command, 0 now" in caplog.text  # --debug


def test_a_run_in_one_process_kills_the_worker_the_command_started(
    agent_project: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from platform_eval.cli import main

    Path("eval_config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.8}}))
    _standby.start(1)
    [standby] = _standby._waiting
    code = main(
        [
            "-q", "run", "agents/travel.evalset.json", "--agent", "agents/travel_agent",
            "--config", "eval_config.json", "--format", "json",
        ]
    )  # fmt: skip
    assert code == 1 and len(json.loads(capsys.readouterr().out)["rows"]) == 4
    # Four runs are one process's worth (auto): the worker was killed before they ran.
    assert standby.returncode == -signal.SIGKILL and _standby._waiting == []


def test_a_started_worker_that_ended_before_the_pool_took_it_gives_its_cases_back(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """One started with the command can fail in its imports: telling it the agent breaks no
    pipe here, and the cases handed to it run in this process."""
    import asyncio

    from platform_eval.agents import CaseRun
    from platform_eval.agents.model_quota import CaseQuota
    from platform_eval.agents.workers import WorkerPool
    from platform_eval.formats import adk

    ended = subprocess.Popen(
        [sys.executable, "-c", "raise SystemExit(3)"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
    )
    ended.wait()
    monkeypatch.setattr(_standby, "take", lambda count: [ended])
    cases = [
        adk.EvalCase.model_validate({"eval_id": f"c{i}", "conversation": []}) for i in range(4)
    ]

    async def here(case: adk.EvalCase, run: int, *_: object) -> tuple[CaseRun, str | None]:
        return CaseRun(case.eval_id, run, ending="here"), None

    async def main() -> list[CaseRun]:
        pool = WorkerPool("no_agent", 1)
        await pool.start()
        try:
            execute = pool.executor(here)
            done = await asyncio.gather(
                *(execute(case, 1, CaseQuota(_NoPlace()), None, lambda: None) for case in cases)
            )
            return [run for run, _ in done]
        finally:
            await pool.close()

    runs = asyncio.run(main())
    assert [(r.eval_id, r.ending, r.error) for r in runs] == [
        (f"c{i}", "here", None) for i in range(4)
    ]
    assert "a worker process could not load the agent" in caplog.text
    assert "exit code 3" in caplog.text


class _NoPlace:
    def refused_now(self, retry_after: float | None = None) -> None:
        raise AssertionError("no model call here")


def test_a_ctrl_c_while_the_command_imports_itself_is_one_line_and_kills_the_workers(
    tmp_path: Path,
) -> None:
    """The command's import is a second in which Ctrl-C used to print its traceback."""
    argv = ["run", "set.evalset.json", "--agent", "app/", "--agent-processes", "2"]
    interrupting = (
        "real_import = builtins.__import__\n"
        "def importing(name, *args, **kwargs):\n"
        "    if name == 'cli' and args[-1] == 1:\n"
        "        raise KeyboardInterrupt\n"
        "    return real_import(name, *args, **kwargs)\n"
        "builtins.__import__ = importing\n"
    )
    done = _launched(tmp_path, argv, setup=interrupting)
    assert done.stdout.strip() == f"130 [{-signal.SIGKILL}]"
    assert done.stderr == "platform-eval: error: interrupted\n"


def _launched(
    cwd: Path, argv: list[str], *, workers: str = "n", setup: str = ""
) -> subprocess.CompletedProcess[str]:
    """``_launcher.program()`` on ``argv`` in a child process (after ``setup``), starting
    ``workers`` workers where it asks for ``n``; it prints its exit code and the return codes
    of the workers started."""
    code = (
        "import builtins, sys\n"
        "from platform_eval import _launcher, _standby\n"
        "started = []\n"
        "real_start = _standby.start\n"
        f"_standby.start = lambda n: (real_start({workers}), started.extend(_standby._waiting))\n"
        f"{setup}"
        f"sys.argv = ['platform-eval', *{argv!r}]\n"
        "code = _launcher.program()\n"
        "print(code, [w.returncode for w in started])\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd
    )
