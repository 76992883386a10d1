"""``run --agent``: the agent runs on every case through google-adk's Runner, against a fake
Gemini server on loopback scripted per user message (tests/agent_script.py), and its sessions
are evaluated as saved sessions are."""

from __future__ import annotations

import csv
import io
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from fake_gemini import FakeGemini
from paths import SAMPLE_AGENTS

from platform_eval import jobs
from platform_eval.cli import main
from platform_eval.target import connect

AGENTS = SAMPLE_AGENTS
CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}

#: What the scripted agent scores on samples/agent/travel.evalset.json (adk eval's figures).
EXPECTED = {
    ("weather_paris", "tool_trajectory_avg_score"): 1.0,
    ("weather_paris", "response_match_score"): 1.0,
    ("weather_then_booking", "tool_trajectory_avg_score"): 1.0,
    ("weather_then_booking", "response_match_score"): 0.8333333333333333,
    ("who_am_i", "tool_trajectory_avg_score"): 1.0,
    ("who_am_i", "response_match_score"): 1.0,
    ("weather_oslo", "tool_trajectory_avg_score"): 0.0,
    ("weather_oslo", "response_match_score"): 0.5714285714285715,
}


@pytest.fixture
def model(agent_project: FakeGemini) -> FakeGemini:
    """The agent project (conftest), with this module's eval configs."""
    (Path.cwd() / "eval_config.json").write_text(json.dumps(CONFIG))
    return agent_project


def _run(*args: str) -> int:
    return main(["-q", "run", "agents/travel.evalset.json", *args])


def _scores(report: dict[str, Any]) -> dict[tuple[str, str, str], float | None]:
    return {(r["evalCaseId"], r["candidate"], r["metric"]): r["score"] for r in report["rows"]}


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_run_agent_scores_every_case_as_adk_eval_does(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _run(
        "--agent", "agents/travel_agent", "--config", "eval_config.json", "--format", "json"
    )
    out = capsys.readouterr().out
    report = json.loads(out)
    assert code == 1  # weather_oslo misses both thresholds
    got = {(case, metric): score for (case, _, metric), score in _scores(report).items()}
    assert got == pytest.approx(EXPECTED)
    assert {r["candidate"] for r in report["rows"]} == {"agent"}
    assert "perCase" not in report  # one run per case: no spread to show
    # Every turn went to the model: 2 calls per tool turn, 1 for who_am_i.
    assert len(model.seen) == 9


def test_session_state_and_tools_reach_the_agent(model: FakeGemini, tmp_path: Path) -> None:
    assert (
        _run(
            "--agent",
            "agents/travel_agent",
            "--config",
            "eval_config.json",
            "--save-sessions",
            "sessions",
        )
        == 1
    )
    who = json.loads((tmp_path / "sessions" / "who_am_i.json").read_text())
    assert who["appName"] == "travel_agent" and who["userId"] == "ada"
    assert who["state"]["user_name"] == "Ada"
    booking = json.loads((tmp_path / "sessions" / "weather_then_booking.json").read_text())
    # The tool wrote to the session's state: the finished session is what was evaluated.
    assert booking["state"]["booking"] == {"city": "Rome", "nights": 2, "confirmation": "ROM-2"}
    assert booking["id"] == "weather_then_booking"


def test_the_session_state_the_agent_started_from_is_not_called_dropped(
    model: FakeGemini, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """who_am_i starts from a session state: run --agent used it, so no "not carried" note;
    an upload of the same set (no agent) says it once, as a warning, and not again in its
    report."""
    import logging

    caplog.set_level(logging.WARNING, logger="platform_eval")
    assert _run("--agent", "agents/travel_agent", "--config", "eval_config.json") == 1
    assert not [r for r in caplog.records if "session_input.state" in r.getMessage()]
    capsys.readouterr()
    caplog.clear()
    with connect(db=None) as target:
        report = jobs.UploadReport()
        jobs.upload_eval_set(target.client, "agents/travel.evalset.json", report=report)
    said = [r.getMessage() for r in caplog.records if "session_input.state" in r.getMessage()]
    assert said == [
        "eval case who_am_i: not carried: session_input.state (kept in item metadata; the "
        "service does not initialize sessions from it)"
    ]
    assert "not carried" not in report.summary()


@pytest.mark.slow
def test_num_runs_gives_candidates_and_a_spread_in_every_format(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _run(
        "--agent",
        "agents/travel_agent",
        "--config",
        "eval_config.json",
        "--num-runs",
        "3",
        "--format",
        "json",
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    candidates = {(r["evalCaseId"], r["candidate"]) for r in report["rows"]}
    assert len(candidates) == 4 * 3
    assert {c for _, c in candidates} == {"agent#1", "agent#2", "agent#3"}
    spread = {(s["evalCaseId"], s["metric"]): s for s in report["perCase"]}
    assert len(spread) == 8
    booking = spread[("weather_then_booking", "response_match_score")]
    assert booking["candidates"] == 3 and booking["scored"] == 3
    assert booking["mean"] == pytest.approx(0.8333333333333333) and booking["stdev"] == 0.0
    run = report["run"]

    for fmt, expect in (
        ("table", "per case, over its candidates:"),
        ("markdown", "| case | metric | candidates | mean | stdev | min | max |"),
        ("html", "<h2>Per case, over its candidates</h2>"),
        ("junit", '<property name="caseMean" value="0.833333"'),
    ):
        main(["-q", "results", run, "--format", fmt])
        assert expect in capsys.readouterr().out, fmt
    main(["-q", "results", run, "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    oslo = [
        r
        for r in rows
        if r["evalCaseId"] == "weather_oslo" and r["metric"] == "response_match_score"
    ]
    assert len(oslo) == 3
    assert [float(r["caseMean"]) for r in oslo] == pytest.approx([0.5714285714285715] * 3)
    assert {r["caseStdev"] for r in oslo} == {"0.0"}


@pytest.mark.slow
def test_saved_sessions_and_traces_give_the_same_scores_without_the_agent(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(
        "--agent",
        "agents/travel_agent",
        "--config",
        "eval_config.json",
        "--num-runs",
        "2",
        "--save-sessions",
        "sessions",
        "--save-traces",
        "traces",
        "--format",
        "json",
    )
    ran = _scores(json.loads(capsys.readouterr().out))
    calls = len(model.seen)
    assert sorted(p.name for p in Path("sessions").iterdir())[:2] == [
        "weather_oslo.run1.json",
        "weather_oslo.run2.json",
    ]
    for folder in ("sessions", "traces"):
        _run("--traces", folder, "--config", "eval_config.json", "--format", "json")
        assert _scores(json.loads(capsys.readouterr().out)) == ran, folder
    assert len(model.seen) == calls  # the agent did not run again


def test_a_case_the_agent_fails_on_is_not_evaluated_and_the_others_run(
    model: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    eval_set = json.loads((tmp_path / "agents" / "travel.evalset.json").read_text())
    atlantis = json.loads(json.dumps(eval_set["eval_cases"][1]))
    atlantis["eval_id"] = "book_atlantis"
    atlantis["conversation"] = atlantis["conversation"][1:]
    atlantis["conversation"][0]["user_content"]["parts"][0]["text"] = "Book 2 nights in Atlantis"
    eval_set["eval_cases"].append(atlantis)
    (tmp_path / "with_failure.evalset.json").write_text(json.dumps(eval_set))
    code = main(
        [
            "-q",
            "run",
            "with_failure.evalset.json",
            "--agent",
            "agents/travel_agent",
            "--config",
            "eval_config.json",
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    failed = [r for r in report["rows"] if r["evalCaseId"] == "book_atlantis"]
    assert {r["metric"] for r in failed} == {"tool_trajectory_avg_score", "response_match_score"}
    for row in failed:
        assert row["status"] == "NOT_EVALUATED" and row["score"] is None
        assert (
            "the agent failed on this case: RuntimeError: no hotels in Atlantis"
            in row["explanation"]
        )
    scored = {(c, m): s for (c, _, m), s in _scores(report).items() if c != "book_atlantis"}
    assert scored == pytest.approx(EXPECTED)
    # Read again later, the run still shows the case and why.
    main(["-q", "results", report["run"], "--format", "json"])
    again = json.loads(capsys.readouterr().out)
    assert [r["explanation"] for r in again["rows"] if r["evalCaseId"] == "book_atlantis"] == [
        r["explanation"] for r in failed
    ]


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Ctrl-C as a terminal delivers it, however the test run was started: a command a shell
    starts in the background ignores SIGINT, and Python then keeps ignoring it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.slow  # seconds of its own: CI runs it (.ci/run)
@pytest.mark.usefixtures("ctrl_c")
def test_an_interrupted_agent_run_resumes_without_running_finished_cases(
    model: FakeGemini, tmp_path: Path
) -> None:
    def stop_after_two(progress: Any) -> None:
        if progress.done == 2 and not stopped:
            stopped.append(True)
            signal.raise_signal(signal.SIGINT)  # Ctrl-C, as a user presses it

    stopped: list[bool] = []

    with connect(db=tmp_path / "store.sqlite") as target:
        with pytest.raises(KeyboardInterrupt):
            jobs.evaluate(
                target.client,
                "agents/travel.evalset.json",
                config="eval_config.json",
                agent="agents/travel_agent",
                agent_concurrency=1,
                on_agent_progress=stop_after_two,
                poll_interval=0.05,
            )
        first = len(model.seen)
        journal = tmp_path / ".platform-eval" / "agent-runs"
        assert len(list(journal.rglob("*.json"))) == 2
        evaluation = jobs.evaluate(
            target.client,
            "agents/travel.evalset.json",
            config="eval_config.json",
            agent="agents/travel_agent",
            poll_interval=0.05,
        )
        assert evaluation.agent_runs.resumed == 2
        assert "2 finished by an earlier attempt, not run again" in evaluation.agent_runs.summary()
        # Only the two unfinished cases ran the second time: who_am_i (one model call) and
        # weather_oslo (a tool call, then the answer).
        assert first == 6 and len(model.seen) - first == 3
        assert len(evaluation.results) == 4
        # Evaluated: nothing is kept, and the next evaluation runs the agent afresh.
        assert not list(journal.rglob("*.json"))


@pytest.mark.slow  # seconds of its own: CI runs it (.ci/run)
def test_a_conversation_scenario_runs_with_the_simulator_and_is_scored(
    model: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "scenario_config.json").write_text(
        json.dumps({"criteria": {"per_turn_user_simulator_quality_v1": {"threshold": 0.5}}})
    )
    code = main(
        [
            "-q",
            "--judge-model",
            "gemini-2.5-flash",
            "run",
            "agents/scenario.evalset.json",
            "--agent",
            "agents/travel_agent",
            "--config",
            "scenario_config.json",
            "--save-sessions",
            "sessions",
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    [row] = report["rows"]
    assert row["evalCaseId"] == "plan_a_trip" and row["score"] is not None
    assert code in (0, 1) and row["status"] in ("PASSED", "FAILED")
    session = json.loads((tmp_path / "sessions" / "plan_a_trip.json").read_text())
    said = [e["content"]["parts"][0]["text"] for e in session["events"] if e["author"] == "user"]
    # The scenario's starting prompt, then the simulated user's request, then it stopped.
    assert said == ["What is the weather in Rome?", "Book 2 nights in Rome"]


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ("agents/nowhere", "--agent agents/nowhere: no such folder or file"),
        ("agents", "this one has neither"),
        ("agents.travel_agent.agent:no_such_agent", "has no 'no_such_agent'"),
        ("agents/broken", "importing the agent raised ZeroDivisionError"),
        ("agents/empty", "defines no `root_agent`"),
    ],
)
def test_an_agent_that_cannot_be_loaded_is_a_usage_error(
    model: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, expected: str
) -> None:
    (tmp_path / "agents" / "broken").mkdir()
    (tmp_path / "agents" / "broken" / "agent.py").write_text("root_agent = 1 / 0\n")
    (tmp_path / "agents" / "empty").mkdir()
    (tmp_path / "agents" / "empty" / "__init__.py").write_text("x = 1\n")
    assert _run("--agent", agent, "--config", "eval_config.json") == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err
    assert not model.seen


def test_a_module_attribute_names_the_agent(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        _run(
            "--agent",
            "agents.travel_agent.agent:root_agent",
            "--config",
            "eval_config.json",
            "--format",
            "json",
        )
        == 1
    )
    got = {(c, m): s for (c, _, m), s in _scores(json.loads(capsys.readouterr().out)).items()}
    assert got == pytest.approx(EXPECTED)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--save-sessions", "s"], "--save-sessions needs --agent"),
        (["--num-runs", "2"], "--num-runs needs --agent"),
        (["--agent", "agents/travel_agent", "--traces", "t"], "--agent and --traces"),
    ],
)
def test_agent_flags_without_an_agent_are_usage_errors(
    model: FakeGemini, capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    assert _run(*args, "--config", "eval_config.json") == 2
    assert expected in capsys.readouterr().err


def test_the_pytest_fixture_runs_an_agent(model: FakeGemini, platform_eval: Any) -> None:
    results = platform_eval.evaluate(
        "agents/travel.evalset.json",
        agent="agents/travel_agent",
        config="eval_config.json",
        num_runs=2,
    )
    assert {(r.eval_case_id, r.metric): r.score for r in results.rows} == pytest.approx(EXPECTED)
    assert len(results.spreads()) == 8
    assert not Path(".platform-eval/agent-runs").exists()  # a test keeps nothing to resume


def test_an_agent_model_that_cannot_be_used_stops_the_run_in_one_line(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """The agent's model answers 404 (unknown model): the first case to meet it stops the
    others, and the command says so in one line, naming the model."""
    model.fail_next(404, count=10_000)
    code = _run("--agent", "agents/travel_agent", "--config", "eval_config.json")
    err = capsys.readouterr().err
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) <= 3 and "Traceback" not in err, err
    assert "the agent's model gemini-2.5-flash cannot be used: ClientError: 404" in lines[-1]
    # The server's status and message, not google-genai's dict of the whole answer.
    assert "ClientError: 404 INTERNAL: try later" in lines[-1] and "{'error'" not in err
    assert len(model.seen) <= 4  # the cases under way when the first one failed


@pytest.mark.slow  # 32 agent runs against a 100 ms model: CI runs it
def test_auto_concurrency_keeps_under_the_model_s_quota_and_every_run_finishes(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """--agent-concurrency auto (the default) against a model taking 3 calls at once (429
    beyond, Retry-After 10 ms): all 32 runs finish with adk eval's scores, the 429s are
    retried, and the cases at once are cut below the cap. (A retry once waited the
    Retry-After alone: the cut holds back new cases, but the cases already under way, a dozen
    over a quota of three, spent their seven tries within a tenth of a second, and one run in
    five or ten had a case give up. A retry now waits at least a backoff from 1 s.)"""
    model.quota, model.quota_retry_after, model.delay = 3, "0.01", 0.1
    code = _run(
        "--agent",
        "agents/travel_agent",
        "--config",
        "eval_config.json",
        "--num-runs",
        "8",
        "--max-concurrency",
        "16",
        "--format",
        "json",
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 1  # weather_oslo misses both thresholds, in every run
    scores = _scores(report)
    assert len(scores) == 4 * 8 * 2
    for (case, _, metric), score in scores.items():
        assert score == pytest.approx(EXPECTED[(case, metric)]), (case, metric)
    assert model.refused > 0  # the quota was reached, and its 429s retried
    assert model.most_in_flight <= 3 + 1  # the quota's, and the one it refused


@pytest.mark.slow  # three runs of every case: CI runs it (.ci/run)
def test_repeated_runs_gate_on_pass_hat_k_and_quarantine_keeps_a_case_out_of_the_gate(
    model: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """weather_oslo misses its thresholds on every run, the three other cases pass every run:
    pass^3 is 0.75. A threshold under it passes the run, one over it fails it; recorded with
    the run, `results RUN` judges alike; a quarantined case fails no gate."""
    base = ["--agent", "agents/travel_agent", "--config", "eval_config.json", "--num-runs", "3"]
    assert _run(*base, "--threshold", "pass^3=0.7", "--format", "json") == 0
    document = json.loads(capsys.readouterr().out)
    assert document["reliability"]["pass^3"] == pytest.approx(0.75)
    assert document["reliability"]["flaky"] == [] and document["verdict"] == "PASSED"
    run = document["run"]
    assert main(["-q", "results", run]) == 0  # the recorded pass^3 threshold judges again
    assert main(["-q", "results", run, "--threshold", "pass^3=0.8"]) == 1
    assert "pass^3: 0.750 < 0.8" in capsys.readouterr().out
    (tmp_path / "quarantine.txt").write_text("# known bad, fixed in PR 12\nweather_oslo\n")
    assert main(["-q", "results", run, "--ignore-run-thresholds", "--config", "eval_config.json",
                 "--quarantine", "quarantine.txt"]) == 0  # fmt: skip
    assert _run(*base, "--threshold", "pass^4=0.5") == 2
    assert "needs 4 runs of each case or more" in capsys.readouterr().err


@pytest.mark.slow  # two runs of every case: CI runs it (.ci/run)
def test_the_agents_tokens_cost_and_latency_are_results_and_can_be_bounds(
    model: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Token counts are the sums of the fake model's usageMetadata for the agent's calls; the
    cost is those tokens at the table's price; a bound missed fails the run."""
    base = ["--agent", "agents/travel_agent", "--config", "eval_config.json", "--num-runs", "2"]
    assert _run(*base, "--threshold", "latency_p95_s=3600", "--format", "json") == 1
    usage = json.loads(capsys.readouterr().out)["agentUsage"]
    agent_calls = [u for seen, u in model.answered if seen.body.get("tools")]
    assert usage["modelCalls"] == len(agent_calls) == 18
    for ours, theirs in (("promptTokens", "promptTokenCount"),
                         ("outputTokens", "candidatesTokenCount"),
                         ("thinkingTokens", "thoughtsTokenCount")):  # fmt: skip
        assert usage[ours] == sum(u[theirs] for u in agent_calls), ours
    price_in, price_out = 0.30, 2.50  # gemini-2.5-flash, the sample agent's model
    cost = (
        usage["promptTokens"] * price_in
        + (usage["outputTokens"] + usage["thinkingTokens"]) * price_out
    ) / 1e6
    assert usage["cost_per_case_usd"] == pytest.approx(cost / 8)  # 4 cases x 2 runs
    assert usage["latency_p95_s"] is not None and usage["missed"] == []
    assert {c["evalCaseId"] for c in usage["perCase"]} == set(EXPECTED_CASES)
    assert _run(*base, "--threshold", "cost_per_case_usd=0") == 1
    assert "cost_per_case_usd:" in capsys.readouterr().out
    (tmp_path / "prices.json").write_text(
        json.dumps({"gemini-2.5-flash": {"input": 0, "output": 0}})
    )
    main(["-q", "run", "agents/travel.evalset.json", *base, "--prices", "prices.json",
          "--format", "json"])  # fmt: skip
    assert json.loads(capsys.readouterr().out)["agentUsage"]["cost_per_case_usd"] == 0


EXPECTED_CASES = ("weather_paris", "weather_then_booking", "who_am_i", "weather_oslo")


def test_without_a_terminal_progress_is_a_line_at_intervals(
    model: FakeGemini, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CI log (no terminal) saw nothing until the end of a long run; now a line at most every
    PLATFORM_EVAL_PROGRESS_SECONDS (30 unless set; here, every event)."""
    monkeypatch.setenv("PLATFORM_EVAL_PROGRESS_SECONDS", "0.000001")
    main(["run", "agents/travel.evalset.json", "--agent", "agents/travel_agent",
          "--config", "eval_config.json"])  # fmt: skip
    err = capsys.readouterr().err
    agent_lines = [line for line in err.splitlines() if line.startswith("running the agent:")]
    assert len(agent_lines) >= 3 and "\r" not in err, err
    assert agent_lines[-1].startswith("running the agent: 4/4 runs")


def test_two_cases_of_one_id_are_refused_before_the_agent_runs(
    agent_project: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """The eval set file is read a case at a time; its cases' ids are still checked whole,
    before the agent runs on any of them."""
    eval_set = json.loads(Path("agents/travel.evalset.json").read_text())
    eval_set["eval_cases"][1]["eval_id"] = eval_set["eval_cases"][0]["eval_id"]
    Path("twice.evalset.json").write_text(json.dumps(eval_set))
    code = main(["-q", "run", "twice.evalset.json", "--agent", "agents/travel_agent",
                 "--metrics", "response_match_score"])  # fmt: skip
    assert code == 2
    said = capsys.readouterr().err
    assert "$.eval_cases[1].eval_id" in said and "each case needs an id of its own" in said
    assert agent_project.seen == []  # the agent never ran
