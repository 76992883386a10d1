"""``run --agent --agent-processes N``: cases run in worker processes beside this one, each
loading the agent from its spec (google-adk's Runner, the fake Gemini server on loopback). A
case run in a worker gives what it gives here: its session, its mocked tool calls, its quota
refusals (which cut the one limit this process holds), its failure."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from agent_script import write_travel_agent
from fake_gemini import FakeGemini

from platform_eval._standby import MAX_AUTO_PROCESSES, RUNS_PER_PROCESS, process_count
from platform_eval.agents import CaseRun, load_agent
from platform_eval.agents.connection import run_deadline
from platform_eval.agents.model_quota import CaseQuota
from platform_eval.agents.running import CaseContext, CaseExecutor, CaseSettings, execute_case
from platform_eval.agents.tool_mocks import ToolMocks, plan_mocks
from platform_eval.agents.workers import WorkerPool
from platform_eval.cli import main
from platform_eval.formats import adk
from platform_eval.formats.load import load_eval_set

CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}


class _Place:
    """A case's place that records the refusals a worker sends back."""

    def __init__(self) -> None:
        self.refusals: list[float | None] = []

    def refused_now(self, retry_after: float | None = None) -> None:
        self.refusals.append(retry_after)


def _cases() -> list[adk.EvalCase]:
    return list(load_eval_set("agents/travel.evalset.json").eval_cases)


def _in_worker(
    body: Callable[[CaseExecutor], Awaitable[Any]],
    spec: str = "agents/travel_agent",
    settings: CaseSettings | None = None,
) -> Any:
    """``body`` with a pool of one worker that has loaded the agent; no case runs here."""

    async def main() -> Any:
        pool = WorkerPool(spec, 1, settings)
        await pool.start()
        try:
            await asyncio.wait_for(pool._workers[0].ready, 120)
            return await body(pool.executor(None))  # no local: every case to the worker
        finally:
            await pool.close()

    return asyncio.run(main())


def _shape(session: dict[str, Any]) -> list[tuple[str, str]]:
    """A session's events as who said what (texts, tool calls and responses): what scores
    read, without the ids and times every run draws afresh."""
    shape = []
    for event in session["events"]:
        for part in (event.get("content") or {}).get("parts") or []:
            if "text" in part:
                shape.append((event["author"], part["text"]))
            elif "functionCall" in part:
                call = part["functionCall"]
                shape.append((event["author"], f"{call['name']}{json.dumps(call['args'])}"))
            elif "functionResponse" in part:
                answer = part["functionResponse"]
                shape.append((event["author"], json.dumps(answer["response"], sort_keys=True)))
    return shape


@pytest.fixture
def project(agent_project: FakeGemini) -> Iterator[FakeGemini]:
    (Path.cwd() / "eval_config.json").write_text(json.dumps(CONFIG))
    yield agent_project


def test_auto_takes_a_process_per_25_runs_up_to_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("platform_eval._standby.usable_cores", lambda: 3)
    assert process_count("auto", 2 * RUNS_PER_PROCESS - 1) == 1
    assert process_count("auto", 2 * RUNS_PER_PROCESS) == 2
    assert process_count("auto", 10_000) == 3  # the cores
    monkeypatch.setattr("platform_eval._standby.usable_cores", lambda: 64)
    assert process_count("auto", 10_000) == MAX_AUTO_PROCESSES == 4
    assert process_count(12, 20) == 12  # a number chosen is taken as it is,
    assert process_count(12, 3) == 3  # up to the runs: a process beyond them holds no case


def test_a_case_run_in_a_worker_gives_what_it_gives_here(project: FakeGemini) -> None:
    cases = _cases()

    async def here() -> list[CaseRun]:
        context = CaseContext.for_agent(await load_agent("agents/travel_agent"))
        runs = []
        for case in cases:
            run, stops = await execute_case(context, case, 1, CaseQuota(_Place()), None, _nothing)
            assert stops is None
            runs.append(run)
        return runs

    async def there(execute: CaseExecutor) -> list[CaseRun]:
        turns: list[str] = []
        answers = await asyncio.gather(
            *(
                execute(case, 1, CaseQuota(_Place()), None, lambda: turns.append("turn"))
                for case in cases
            )
        )
        assert all(stops is None for _, stops in answers)
        # Each turn the worker finished was told here, as it ended (the progress line).
        assert len(turns) == sum(len(case.conversation or []) for case in cases)
        return [run for run, _ in answers]

    local, remote = asyncio.run(here()), _in_worker(there)
    for mine, theirs in zip(local, remote, strict=True):
        assert theirs.error is None and mine.error is None
        assert (theirs.eval_id, theirs.run, theirs.ending) == (mine.eval_id, mine.run, mine.ending)
        assert _shape(theirs.session or {}) == _shape(mine.session or {})
        assert theirs.session is not None and mine.session is not None
        assert theirs.session["state"] == mine.session["state"]  # the booking the tool made
        assert theirs.agents == mine.agents  # what ADK's judges are told the agent was given


def _nothing() -> None:
    pass


@pytest.mark.slow  # a worker process of its own: CI runs it
def test_mocked_tools_answer_in_the_worker_and_their_calls_come_back(
    project: FakeGemini,
) -> None:
    Path("mocks.json").write_text(
        json.dumps({"get_weather": {"response": {"city": "Paris", "forecast": "raining"}}})
    )
    cases = [c for c in _cases() if c.eval_id == "weather_paris"]
    plan = plan_mocks("mocks.json", cases)
    assert plan is not None

    async def there(execute: CaseExecutor) -> tuple[CaseRun, str | None]:
        mocks: ToolMocks = plan.for_case(cases[0])
        return await execute(cases[0], 1, CaseQuota(_Place()), mocks, _nothing)

    run, _ = _in_worker(there)
    assert run.error is None and run.session is not None
    # The mock answered in the worker (the real tool says sunny), and its log came back.
    assert ("travel_agent", "The weather in Paris is raining.") in _shape(run.session)
    assert run.tool_calls == [("get_weather", '{"city": "Paris"}', "mocked")]


@pytest.mark.slow  # a worker process of its own: CI runs it
def test_a_worker_records_each_run_s_spans_with_save_traces(project: FakeGemini) -> None:
    """--save-traces in a worker: each case's spans come back with it, as OTLP JSON, its model
    calls and tool calls among them, and what the traces reader makes of them is the case's
    conversation."""
    from platform_eval.traces import load_conversations

    cases = [c for c in _cases() if c.eval_id == "weather_paris"]

    async def there(execute: CaseExecutor) -> tuple[CaseRun, str | None]:
        return await execute(cases[0], 1, CaseQuota(_Place()), None, _nothing)

    run, _ = _in_worker(there, settings=CaseSettings(record_spans=True))
    assert run.error is None and run.spans is not None
    names = [
        span["name"]
        for resource in run.spans["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    assert any(name.startswith("execute_tool get_weather") for name in names), names
    Path("spans.otlp.json").write_text(json.dumps(run.spans))
    [conversation] = load_conversations("spans.otlp.json")
    texts = [
        part.text
        for turn in conversation.agent_data.turns or []
        for event in turn.events or []
        for part in (event.content.parts if event.content else None) or []
        if part.text
    ]
    assert texts[-1] == "The weather in Paris is sunny."


@pytest.mark.slow  # a worker process of its own: CI runs it
def test_a_quota_refusal_in_a_worker_reaches_the_limit_held_here(project: FakeGemini) -> None:
    """The model takes two calls at once; once it has answered (before, a 429 is the probe's to
    retry), four cases at once in the worker meet its 429s, and each is sent back to the
    case's place here (which cuts the shared limit), with the count and the slowest call's
    time."""
    project.quota, project.quota_retry_after, project.delay = 2, "0.2", 0.1
    cases = _cases()
    places = [_Place() for _ in cases]
    quotas = [CaseQuota(place) for place in places]

    async def there(execute: CaseExecutor) -> list[tuple[CaseRun, str | None]]:
        first, _ = await execute(cases[0], 2, CaseQuota(_Place()), None, _nothing)
        assert first.error is None
        return await asyncio.gather(
            *(
                execute(case, 1, quota, None, _nothing)
                for case, quota in zip(cases, quotas, strict=True)
            )
        )

    answers = _in_worker(there, settings=CaseSettings(adaptive=True))
    assert all(run.error is None for run, _ in answers)
    refusals = sum(len(place.refusals) for place in places)
    assert refusals > 0 and refusals == sum(quota.refused for quota in quotas)
    assert {r for place in places for r in place.refusals} == {0.2}
    assert all(quota.slowest is not None and quota.slowest >= 0.1 for quota in quotas)


@pytest.mark.slow  # a worker process of its own: CI runs it
def test_a_case_in_a_worker_ends_by_the_run_s_timeout(project: FakeGemini) -> None:
    """The run's timeout set here reaches the worker with the case: a model that takes 60 s
    a call leaves the case NOT_EVALUATED at the run's deadline, saying so, not at the turn's."""

    async def there(execute: CaseExecutor) -> tuple[CaseRun, float]:
        first, _ = await execute(_cases()[0], 2, CaseQuota(_Place()), None, _nothing)
        assert first.error is None  # the model has answered: no probe waits below
        project.delay = 60
        started = asyncio.get_running_loop().time()
        with run_deadline(2):
            answered, _ = await asyncio.wait_for(
                execute(_cases()[0], 1, CaseQuota(_Place()), None, _nothing), 30
            )
        return answered, asyncio.get_running_loop().time() - started

    answered, took = _in_worker(there)
    assert answered.error is not None and "the run's timeout" in answered.error
    assert took < 15


@pytest.mark.slow  # a worker process of its own: CI runs it
def test_what_the_agent_prints_or_reads_does_not_break_the_channel(
    project: FakeGemini, capfd: pytest.CaptureFixture[str]
) -> None:
    write_travel_agent(
        Path("loud_agent"),
        """
        import sys
        print("loading the agent", flush=True)
        assert sys.stdin.read() == ""  # not the messages: those come on a copy of it
        sys.stdout.buffer.write(b"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x09 not a frame\\n")
        sys.stdout.flush()
        _quiet = get_weather
        def get_weather(city: str) -> dict:
            '''Returns today's forecast for a city.'''
            print("looking up", city, flush=True)
            return _quiet(city)
        root_agent.tools[0] = get_weather
        """,
    )
    cases = [c for c in _cases() if c.eval_id == "weather_paris"]

    async def there(execute: CaseExecutor) -> tuple[CaseRun, str | None]:
        return await execute(cases[0], 1, CaseQuota(_Place()), None, _nothing)

    run, _ = _in_worker(there, spec="loud_agent")
    assert run.error is None and run.session is not None
    assert ("travel_agent", "The weather in Paris is sunny.") in _shape(run.session)
    err = capfd.readouterr().err
    assert "loading the agent" in err and "looking up Paris" in err


@pytest.mark.slow  # worker processes of their own: CI runs it
def test_a_worker_that_dies_fails_only_its_cases_and_the_rest_run_here(
    project: FakeGemini,
) -> None:
    write_travel_agent(
        Path("fragile_agent"),
        """
        import os
        _quiet = get_weather
        def get_weather(city: str) -> dict:
            '''Returns today's forecast for a city.'''
            if city == "Oslo" and os.getpid() != int(os.environ["TEST_PARENT_PID"]):
                os._exit(7)  # the process dies under the case, as a crash would
            return _quiet(city)
        root_agent.tools[0] = get_weather
        """,
    )
    os.environ["TEST_PARENT_PID"] = str(os.getpid())
    cases = {c.eval_id: c for c in _cases()}

    async def main() -> tuple[CaseRun, CaseRun, bool]:
        pool = WorkerPool("fragile_agent", 1)
        context = CaseContext.for_agent(await load_agent("fragile_agent"))
        execute = pool.executor(lambda *given: execute_case(context, *given))
        await pool.start()
        try:
            await asyncio.wait_for(pool._workers[0].ready, 120)
            oslo, _ = await execute(cases["weather_oslo"], 1, CaseQuota(_Place()), None, _nothing)
            paris, _ = await execute(cases["weather_paris"], 1, CaseQuota(_Place()), None, _nothing)
            return oslo, paris, pool._workers[0].gone is not None
        finally:
            await pool.close()
            del os.environ["TEST_PARENT_PID"]

    oslo, paris, gone = asyncio.run(main())
    assert gone
    assert oslo.error == "the worker process running the agent stopped (exit code 7)"
    assert paris.error is None and paris.session is not None  # ran here, the worker gone


@pytest.mark.slow  # worker processes of their own: CI runs it
def test_a_worker_that_cannot_load_the_agent_is_said_and_the_cases_run_here(
    project: FakeGemini, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    write_travel_agent(
        Path("picky_agent"),
        """
        import os, pathlib, time
        if os.getpid() != int(os.environ["TEST_PARENT_PID"]):
            pathlib.Path("worker-tried").touch()
            raise RuntimeError("only in the first process")
        _quiet = get_weather
        def get_weather(city: str) -> dict:
            '''Returns today's forecast for a city.'''
            # Until the worker has failed (whatever the machine's load), and its news is in.
            deadline = time.monotonic() + 120
            while not pathlib.Path("worker-tried").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)
            return _quiet(city)
        root_agent.tools[0] = get_weather
        """,
    )
    os.environ["TEST_PARENT_PID"] = str(os.getpid())
    try:
        code = main(
            [
                "-q", "run", "agents/travel.evalset.json", "--agent", "picky_agent",
                "--config", "eval_config.json", "--agent-processes", "2", "--format", "json",
            ]
        )  # fmt: skip
    finally:
        del os.environ["TEST_PARENT_PID"]
    report = json.loads(capsys.readouterr().out)
    assert code == 1  # weather_oslo misses its thresholds, as in one process
    assert len(report["rows"]) == 8 and all(r["score"] is not None for r in report["rows"])
    assert "a worker process could not load the agent" in caplog.text
    assert "only in the first process" in caplog.text


@pytest.mark.slow  # worker processes of their own: CI runs it
def test_run_with_processes_scores_as_one_process_does(
    project: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """Twenty-four runs in two processes: every case's scores as in one process, and cases
    ran in both (the tool is slow in this process while the worker starts, so that it joins
    whatever the machine's load)."""
    write_travel_agent(
        Path("counted_agent"),
        """
        import os, time
        _quiet = get_weather
        def get_weather(city: str) -> dict:
            '''Returns today's forecast for a city.'''
            with open("pids.txt", "a") as pids:
                pids.write(f"{os.getpid()}\\n")
            if str(os.getpid()) == os.environ.get("TEST_SLOW_IN"):
                time.sleep(0.5)
            return _quiet(city)
        root_agent.tools[0] = get_weather
        """,
    )
    outputs = []
    for processes in ("1", "2"):
        Path("pids.txt").unlink(missing_ok=True)
        if processes == "2":
            os.environ["TEST_SLOW_IN"] = str(os.getpid())
        try:
            code = main(
                [
                    "-q", "run", "agents/travel.evalset.json", "--agent", "counted_agent",
                    "--config", "eval_config.json", "--num-runs", "6", "--agent-processes",
                    processes, "--agent-concurrency", "2", "--format", "json",
                ]
            )  # fmt: skip
        finally:
            os.environ.pop("TEST_SLOW_IN", None)
        assert code == 1
        outputs.append(json.loads(capsys.readouterr().out))
        pids = set(Path("pids.txt").read_text().split())
        assert len(pids) == int(processes)

    def scores(report: dict[str, Any]) -> dict[tuple[str, str, str], float]:
        return {(r["evalCaseId"], r["candidate"], r["metric"]): r["score"] for r in report["rows"]}

    one, two = (scores(report) for report in outputs)
    assert len(one) == 4 * 6 * 2 and one == pytest.approx(two)


def test_agent_processes_is_auto_or_a_whole_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "set.evalset.json", "--agent", "x", "--agent-processes", "0"])
    assert exit_.value.code == 2
    assert "--agent-processes" in capsys.readouterr().err


def _our_workers() -> list[int]:
    """This process's worker processes still alive (Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and b"platform_eval.agents._worker" in cmdline:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.slow  # worker processes of their own: CI runs it
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux's /proc")
def test_ctrl_c_leaves_no_worker_behind_and_the_finished_runs_resume(
    project: FakeGemini, tmp_path: Path
) -> None:
    import signal

    from platform_eval import jobs
    from platform_eval.target import connect

    def stop_after_three(progress: Any) -> None:
        if progress.done == 3 and not stopped:
            stopped.append(True)
            signal.raise_signal(signal.SIGINT)  # Ctrl-C, as a user presses it

    stopped: list[bool] = []
    with connect(db=tmp_path / "store.sqlite") as target:

        def evaluate(**extra: Any) -> Any:
            return jobs.evaluate(
                target.client,
                "agents/travel.evalset.json",
                config="eval_config.json",
                agent="agents/travel_agent",
                num_runs=4,
                agent_processes=2,
                poll_interval=0.05,
                **extra,
            )

        with pytest.raises(KeyboardInterrupt):
            evaluate(agent_concurrency=2, on_agent_progress=stop_after_three)
        assert _our_workers() == []
        # The third run's end stopped the run; a run that ended in the same moment is kept too.
        kept = len(list((tmp_path / ".platform-eval" / "agent-runs").rglob("*.json")))
        assert 3 <= kept < 16
        evaluation = evaluate()
    assert evaluation.agent_runs.resumed == kept
    assert len(evaluation.results) == 4 and _our_workers() == []
