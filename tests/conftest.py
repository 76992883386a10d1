from __future__ import annotations

import asyncio
import inspect
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from platform_eval import AsyncClient, AsyncOperationFuture, AsyncPager, Client, RetryPolicy
from platform_eval.emulator import Emulator

#: Real files from public projects, beside the repository in CI; a user's clone has none.
CORPUS = Path(
    os.environ.get("PLATFORM_EVAL_CORPUS")
    or Path(__file__).resolve().parents[2] / "shared" / "corpus"
)
FAST_RETRY = RetryPolicy(max_retries=3, initial_backoff=0.001, max_backoff=0.01)

#: What would point a command at a real project or at another emulator than the test's own.
ELSEWHERE = ("PLATFORM_EVAL_EMULATOR_HOST", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI")


def work_offline(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``folder`` as the current directory, with nothing pointing elsewhere: the commands use
    the embedded emulator there."""
    monkeypatch.chdir(folder)
    for name in ELSEWHERE:
        monkeypatch.delenv(name, raising=False)


def command_env(model_url: str = "") -> dict[str, str]:
    """The environment of a command run in a process of its own: the embedded emulator, and
    Gemini (agent and judge) at ``model_url`` when given, with a test key."""
    env = {k: v for k, v in os.environ.items() if k not in ELSEWHERE}
    env["GOOGLE_API_KEY"] = "test-key"
    if model_url:
        env["GOOGLE_GEMINI_BASE_URL"] = model_url
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class CliEmulator:
    """``platform-eval emulator start`` in a child process; out and err once it stopped."""

    port: int
    process: subprocess.Popen[str]
    out: str = ""
    err: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def cli_emulator(*args: str, env: Mapping[str, str] | None = None) -> Iterator[CliEmulator]:
    """Starts the CLI's emulator on a free port, waits until it answers, stops it after."""
    port = free_port()
    command = [sys.executable, "-m", "platform_eval.cli", "emulator", "start", "--port"]
    process = subprocess.Popen(
        [*command, str(port), "--log-level", "warning", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=None if env is None else dict(env),
    )
    running = CliEmulator(port, process)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"{running.url}/_emulator/health")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "emulator did not start"
                time.sleep(0.1)
        yield running
    finally:
        process.terminate()
        running.out, running.err = process.communicate(timeout=20)


#: Set by .ci/run and nox's test session: the tests marked slow run too. A newcomer's
#: ``python -m pytest -q`` skips them, saying how to run them.
RUN_SLOW = os.environ.get("PLATFORM_EVAL_SLOW_TESTS") == "1"


def _in_quick_sample(item: pytest.Item) -> bool:
    """A combination of a ``matrix`` its ``quick`` keeps (every test outside a matrix is)."""
    matrix = item.get_closest_marker("matrix")
    callspec = getattr(item, "callspec", None)
    if matrix is None or callspec is None:
        return True
    return bool(matrix.kwargs["quick"](callspec.params))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Bounds on wall time (an outage said within 15 s, Ctrl-C obeyed within 2 s) hold on a
        # machine doing that alone, not beside a worker a core: they run after, on their own.
        alone = pytest.mark.skip(
            reason="timed: runs alone, not beside other workers (.ci/run runs "
            "`python -m pytest -q -m serial` after the parallel run)"
        )
        for item in items:
            if item.get_closest_marker("serial"):
                item.add_marker(alone)
    if not RUN_SLOW:
        slow = pytest.mark.skip(
            reason="slow: CI runs it (.ci/run); PLATFORM_EVAL_SLOW_TESTS=1 runs it here too"
        )
        for item in items:
            if item.get_closest_marker("slow") or not _in_quick_sample(item):
                item.add_marker(slow)
    if CORPUS.is_dir():
        return
    skip = pytest.mark.skip(
        reason=f"needs the public-project corpus at {CORPUS} (CI has ../shared/corpus beside "
        "the repository; set PLATFORM_EVAL_CORPUS to point elsewhere)"
    )
    for item in items:
        if item.get_closest_marker("corpus"):
            item.add_marker(skip)


SAMPLE_DATA = Path(__file__).resolve().parents[1] / "samples" / "data"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with the sample data under ``data/``, as the current directory, with
    no emulator or project configured: what a user's CLI session starts from."""
    import shutil

    monkeypatch.chdir(tmp_path)
    for name in ("PLATFORM_EVAL_EMULATOR_HOST", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    shutil.copytree(SAMPLE_DATA, tmp_path / "data")
    return tmp_path


@pytest.fixture(scope="session")
def emulator() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


@pytest.fixture(autouse=True)
def _clean_faults(emulator: Emulator) -> Iterator[None]:
    emulator.faults.clear()
    yield
    emulator.faults.clear()


_project_counter = iter(range(1_000_000))


@pytest.fixture
def project() -> str:
    """A fresh project per test: the emulator isolates projects, so tests never interfere."""
    return f"test-project-{next(_project_counter)}"


class _SyncFuture:
    """An AsyncOperationFuture whose wait() is driven to completion."""

    def __init__(self, future: AsyncOperationFuture[Any], loop: asyncio.AbstractEventLoop) -> None:
        self._future = future
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        return getattr(self._future, name)

    def wait(self, *args: Any, **kwargs: Any) -> Any:
        return self._loop.run_until_complete(self._future.wait(*args, **kwargs))

    result = wait


async def _collect(items: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in items]


class AsyncAsSync:
    """Runs an async client's methods to completion so one test body covers both clients
    (ours, or Google's ``client.aio.evals``)."""

    def __init__(self, client: AsyncClient | Any) -> None:
        self._client = client
        self._loop = asyncio.new_event_loop()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            if inspect.isawaitable(result):
                result = self._loop.run_until_complete(result)
            if isinstance(result, AsyncPager):
                return self._loop.run_until_complete(result.to_list())
            if inspect.isasyncgen(result):
                return iter(self._loop.run_until_complete(_collect(result)))
            if isinstance(result, AsyncOperationFuture):
                return _SyncFuture(result, self._loop)
            return result

        return call

    def close(self) -> None:
        close = getattr(self._client, "close", None)  # Google's async evals have none
        if close is not None:
            self._loop.run_until_complete(close())
        self._loop.close()


@pytest.fixture(params=["sync", "async"])
def client(request: pytest.FixtureRequest, emulator: Emulator, project: str) -> Iterator[Any]:
    """The sync Client, or the AsyncClient driven to completion: every test runs on both."""
    if request.param == "sync":
        sync = emulator.client(project, retry=FAST_RETRY)
        yield sync
        sync.close()
    else:
        wrapped = AsyncAsSync(emulator.async_client(project, retry=FAST_RETRY))
        yield wrapped
        wrapped.close()


@pytest.fixture
def sync_client(emulator: Emulator, project: str) -> Iterator[Client]:
    with emulator.client(project, retry=FAST_RETRY) as c:
        yield c


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def agent_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A project folder holding the sample travel agent and its eval sets under ``agents/``,
    as the current directory, with the fake Gemini server answering the agent by
    tests/agent_script.py (and any judge as fake_gemini.adk_judge_rule does)."""
    import shutil

    pytest.importorskip("google.adk")
    from agent_script import travel_rule
    from fake_gemini import fake_gemini

    work_offline(tmp_path, monkeypatch)
    agents = Path(__file__).resolve().parents[1] / "samples" / "agent"
    shutil.copytree(agents, tmp_path / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    with fake_gemini(travel_rule) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        yield fake


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers a core. The tests wait on servers, subprocesses and sockets
    about half their time, so a core keeps two busy (measured: 198 s with four workers on two
    cores, 221 s with two)."""
    return 2 * (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )
