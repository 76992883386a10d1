"""Judged metrics from the command line, against a fake Gemini server: the replay cache, the
replay-only gate, the token accounting, and the pre-check that says how to give a judge."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_gemini import FakeGemini, Seen, fake_gemini, tokens
from paths import SAMPLE_DATA

from platform_eval.cli import main

DATA = SAMPLE_DATA
RUN = ["run", "data/weather.evalset.json", "--traces", "data/weather_traces.otlp.json"]
CONFIG = {
    "criteria": {
        "final_response_match_v2": {
            "threshold": 0.5,
            "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 2},
        },
        "rubric_based_final_response_quality_v1": {
            "threshold": 0.5,
            "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 1},
            "rubrics": [
                {
                    "rubric_id": "mentions_weather",
                    "rubric_content": {"text_property": "The answer says what the weather is."},
                }
            ],
        },
    }
}


def rule(seen: Seen) -> str:
    prompt = seen.prompt
    if "is_the_agent_response_valid" in prompt:
        valid = "sunny" in prompt.split('"Agent response":', 1)[1].lower()
        return f'{{"reasoning": "r", "is_the_agent_response_valid": "{"valid" if valid else "invalid"}"}}'
    return "\n".join(
        f"ID: {rubric_id}\nProperty: {text}\nRationale: it does, in so many words\nVerdict: yes"
        for rubric_id, text in re.findall(r"\[id: (mentions_weather)\] (.*)", prompt)
    )


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGemini]:
    monkeypatch.chdir(tmp_path)
    for name in (
        "PLATFORM_EVAL_EMULATOR_HOST",
        "GOOGLE_CLOUD_PROJECT",
        "PLATFORM_EVAL_JUDGE_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    shutil.copytree(DATA, tmp_path / "data")
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    with fake_gemini(rule) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
        yield fake


def _run(*extra: str, fmt: str = "table", quiet: bool = True) -> int:
    return main(
        [
            *(["-q"] if quiet else []),
            "--judge-model",
            "gemini-2.5-flash",
            *extra,
            *RUN,
            "--config",
            "eval_config.json",
            "--format",
            fmt,
        ]
    )


@pytest.mark.slow  # seconds of its own: CI runs it (.ci/run)
def test_the_same_run_twice_makes_no_second_model_call(
    work: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(fmt="json") in (0, 1)
    first = json.loads(capsys.readouterr().out)
    made = len(work.seen)
    # 3 turns x 2 samples for final_response_match_v2, 3 turns x 1 for the rubric criterion.
    assert made == 9
    by_metric = first["judge"].pop("byMetric")
    by_case = first["judge"].pop("byCase")
    assert by_case["paris-then-oslo"]["final_response_match_v2"]["calls"] == 6
    assert first["judge"] == {
        "calls": made,
        "cacheHits": 0,
        "promptTokens": sum(tokens(s.prompt) for s in work.seen),
        "candidatesTokens": sum(tokens(rule(s)) for s in work.seen),
        "thoughtsTokens": 3 * made,
    }
    assert by_metric["final_response_match_v2"]["calls"] == 6
    assert by_metric["rubric_based_final_response_quality_v1"]["calls"] == 3
    scores = {r["metric"]: r["score"] for r in first["rows"]}
    assert scores["final_response_match_v2"] == pytest.approx(1 / 3)  # only Paris is sunny
    assert scores["rubric_based_final_response_quality_v1"] == 1.0
    verdicts = next(
        r["rubricVerdicts"] for r in first["rows"] if r["metric"].startswith("rubric_based")
    )
    assert verdicts and all(v["reasoning"].endswith("in so many words") for v in verdicts)

    assert _run(fmt="json") in (0, 1)
    second = json.loads(capsys.readouterr().out)
    assert len(work.seen) == made  # no model call at all
    assert second["judge"]["calls"] == 0 and second["judge"]["cacheHits"] == made
    assert [r["score"] for r in second["rows"]] == [r["score"] for r in first["rows"]]

    # The cost is kept with each run: `results` shows it later, as `run` printed it.
    assert main(["-q", "results", first["run"], "--format", "json"]) in (0, 1)
    later = json.loads(capsys.readouterr().out)
    assert later["judge"]["calls"] == made and later["judge"]["cacheHits"] == 0
    assert later["judge"]["byMetric"] == by_metric


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_replay_only_names_what_the_cache_cannot_answer(
    work: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run() in (0, 1)
    capsys.readouterr()
    assert _run("--replay-only") in (0, 1)  # unchanged: answered from the cache
    made = len(work.seen)
    evalset = Path("data/weather.evalset.json")
    data = json.loads(evalset.read_text())
    data["eval_cases"][0]["conversation"][1]["final_response"]["parts"][0]["text"] = "Hail."
    evalset.write_text(json.dumps(data))
    capsys.readouterr()
    assert _run("--replay-only") == 2
    err = capsys.readouterr().err
    assert "--replay-only: no recorded judge answer for final_response_match_v2 on case " in err
    assert "paris-then-oslo" in err and "Traceback" not in err
    assert len(work.seen) == made  # nothing was asked


def test_a_judged_metric_without_a_judge_is_refused_saying_how_to_give_one(
    work: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    unjudged = json.loads(json.dumps(CONFIG))
    for criterion in unjudged["criteria"].values():
        criterion["judge_model_options"].pop("judge_model")
    Path("unjudged_config.json").write_text(json.dumps(unjudged))
    assert main(["-q", *RUN, "--config", "unjudged_config.json"]) == 2
    err = capsys.readouterr().err
    assert "'final_response_match_v2' is judged by a model" in err
    assert "--judge-model MODEL" in err and "PLATFORM_EVAL_JUDGE_MODEL" in err
    assert work.seen == []


@pytest.mark.slow  # seconds of its own: CI runs it (.ci/run)
def test_a_call_budget_stops_judging_and_a_rerun_goes_on_from_the_cache(
    work: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("--max-judge-calls", "4", fmt="json", quiet=False) == 1
    captured = capsys.readouterr()
    assert len(work.seen) == 4
    assert "judge budget spent after 4 model calls" in captured.err
    first = json.loads(captured.out)
    assert first["judge"]["calls"] == 4
    assert any(
        r["status"] == "NOT_EVALUATED" and "--max-judge-calls 4" in r["explanation"]
        for r in first["rows"]
    )
    # Run again with room for the rest: the 4 answers come from the cache.
    assert _run(fmt="json") in (0, 1)
    second = json.loads(capsys.readouterr().out)
    assert (second["judge"]["calls"], second["judge"]["cacheHits"]) == (5, 4)
    assert len(work.seen) == 9


def test_the_services_rubric_metrics_are_judged_through_the_cache_too(
    work: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    from fake_gemini import adk_judge_rule

    work.rule = adk_judge_rule
    config = {
        "criteria": {
            "general_quality_v1": {
                "threshold": 0.0,
                "rubrics": [
                    {"rubric_id": "polite", "rubric_content": {"text_property": "It is polite."}}
                ],
            }
        }
    }
    Path("service_config.json").write_text(json.dumps(config))
    command = [
        "-q",
        "--judge-model",
        "gemini-2.5-flash",
        *RUN,
        "--config",
        "service_config.json",
        "--format",
        "json",
    ]
    assert main(command) in (0, 1)
    first = json.loads(capsys.readouterr().out)
    made = len(work.seen)
    assert made >= 1 and first["judge"]["calls"] == made
    (row,) = first["rows"]
    polite = next(v for v in row["rubricVerdicts"] if v["rubricId"] == "polite")
    assert polite["reasoning"] == "read the conversation for polite"
    assert row["score"] is not None  # every rubric, typed or free text, has a verdict
    assert main(command) in (0, 1)
    second = json.loads(capsys.readouterr().out)
    assert len(work.seen) == made and second["judge"]["cacheHits"] == made


def test_safety_v1_is_the_services_to_compute(work: FakeGemini) -> None:
    from platform_eval import jobs
    from platform_eval.jobs.metric_check import service_refusals
    from platform_eval.metrics.computable import SERVICE
    from platform_eval.target import connect

    # On the emulator: refused before anything is uploaded, saying where it is computed.
    with connect(db=None) as embedded, pytest.raises(jobs.MetricsRefusedError) as refused:
        jobs.check_metrics(embedded.client, ["safety_v1"])
    assert [r.kind for r in refused.value.refusals] == [SERVICE]
    assert "a project" in str(refused.value)
    # Against a project: the run names it, and the service computes it.
    assert service_refusals(["safety_v1"]) == []


def test_the_progress_line_counts_judge_calls() -> None:
    from platform_eval.cli.evaluate import progress_line
    from platform_eval.judges import Judging
    from platform_eval.metrics.model_judge import CallLabel
    from platform_eval.types import EvaluationRun

    run = EvaluationRun.model_validate({"name": "projects/p/locations/l/evaluationRuns/7"})
    judging = Judging()
    try:
        assert progress_line(run, 3, 10, judging) == "run 7: None 3/10 items"
        label = CallLabel("m", "c", "a")
        for cached in (False, False, True):
            judging.usage.add(label, {"promptTokenCount": 5}, cached=cached)
        # With --judge-concurrency auto (the default), where the limit stands now.
        assert progress_line(run, 3, 10, judging).endswith(
            "3/10 items, 2 judge calls (1 from the cache), 4 at once"
        )
    finally:
        judging.close()
    fixed = Judging(concurrency=8)
    try:
        fixed.usage.add(CallLabel("m", "c", "a"), {"promptTokenCount": 5}, cached=False)
        assert progress_line(run, 3, 10, fixed).endswith("3/10 items, 1 judge calls")
    finally:
        fixed.close()


def _varying_judge(agent_rule: Any) -> Any:
    """The agent as the travel script answers it; a judge whose verdicts alternate call by
    call, so that identical requests asked twice get different answers the first time."""
    count = itertools.count()

    def answer(seen: Seen) -> str | dict[str, Any]:
        if seen.body.get("tools") or "Simulated User" in seen.prompt:
            return agent_rule(seen)  # type: ignore[no-any-return]
        yes = next(count) % 2 == 0
        if "is_the_agent_response_valid" in seen.prompt:
            return f'{{"reasoning": "r", "is_the_agent_response_valid": "{"valid" if yes else "invalid"}"}}'
        return "\n".join(
            f"ID: {rubric_id}\nProperty: {text}\nRationale: r\nVerdict: {'yes' if yes else 'no'}"
            for rubric_id, text in re.findall(r"\[id: ([^\]]+)\] (.*)", seen.prompt)
        )

    return answer


def _judge_calls(fake: FakeGemini) -> int:
    return sum(
        1
        for seen in fake.seen
        if not seen.body.get("tools") and "Simulated User" not in seen.prompt
    )


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_duplicated_cases_and_num_runs_replay_the_first_runs_answers_exactly(
    agent_project: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two cases with one conversation, each run three times (--num-runs 3), judged with tool
    calls (ADK's random call ids in the prompts): the same command again asks the judge nothing
    and prints the same scores and exit code."""
    from agent_script import travel_rule

    agent_project.rule = _varying_judge(travel_rule)
    evalset = json.loads(Path("agents/travel.evalset.json").read_text())
    paris = next(c for c in evalset["eval_cases"] if c["eval_id"] == "weather_paris")
    evalset["eval_cases"] = [{**paris, "eval_id": name} for name in ("paris_a", "paris_b")]
    Path("twins.evalset.json").write_text(json.dumps(evalset))
    rubric = {
        "rubric_id": "weather_tool",
        "rubric_content": {"text_property": "It looks the weather up."},
    }
    one_sample = {"num_samples": 1}
    config = {
        "criteria": {
            "final_response_match_v2": {"threshold": 0.5, "judge_model_options": one_sample},
            "rubric_based_tool_use_quality_v1": {
                "threshold": 0.5,
                "judge_model_options": one_sample,
                "rubrics": [rubric],
            },
        }
    }
    Path("twins_config.json").write_text(json.dumps(config))
    command = [
        "-q",
        "--judge-model",
        "gemini-2.5-flash",
        "run",
        "twins.evalset.json",
        "--agent",
        "agents/travel_agent",
        "--num-runs",
        "3",
        "--config",
        "twins_config.json",
        "--format",
        "json",
    ]

    def scores() -> tuple[int, list[tuple[Any, ...]], int]:
        before = _judge_calls(agent_project)
        code = main(command)
        rows = json.loads(capsys.readouterr().out)["rows"]
        table = sorted(
            (r["evalCaseId"], r["candidate"], r["metric"], r["score"], r["status"]) for r in rows
        )
        return code, table, _judge_calls(agent_project) - before

    first_code, first, asked = scores()
    assert asked == 12  # 2 cases x 3 runs x 2 criteria, one sample each
    assert len({row[3] for row in first if row[2] == "final_response_match_v2"}) == 2
    again_code, again, asked_again = scores()
    assert asked_again == 0
    assert (again_code, again) == (first_code, first)


def test_the_configs_judge_model_judges_when_no_flag_or_variable_names_one(
    work: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ADK reads judge_model_options.judge_model: no --judge-model, no
    PLATFORM_EVAL_JUDGE_MODEL, and the run is judged by the config's model, replay-only too."""
    command = ["-q", *RUN, "--config", "eval_config.json", "--format", "json"]
    assert main(command) in (0, 1)
    first = json.loads(capsys.readouterr().out)
    assert {seen.model for seen in work.seen} == {"gemini-2.5-flash"}
    assert main(["--replay-only", *command]) in (0, 1)
    again = json.loads(capsys.readouterr().out)
    assert [r["score"] for r in again["rows"]] == [r["score"] for r in first["rows"]]


def test_a_judge_asking_to_wait_a_day_leaves_one_case_not_evaluated_and_the_run_ends(
    work: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """One 429 with ``Retry-After: 99999``: the run does not wait it out (it sat until killed);
    the judgement that got it is NOT_EVALUATED with one line naming the cause, the rest are
    judged."""
    work.fail_next(429, retry_after="99999")
    outcome: list[int] = []
    running = threading.Thread(
        target=lambda: outcome.append(_run("--judge-timeout", "5", fmt="json")), daemon=True
    )
    running.start()
    running.join(120)  # the judge timeout plus margin for a busy machine
    assert not running.is_alive(), "the run waited out the Retry-After"
    assert outcome == [1]  # a result with no score never passes
    rows = json.loads(capsys.readouterr().out)["rows"]
    unjudged = [r for r in rows if r["status"] == "NOT_EVALUATED"]
    assert len(unjudged) == 1, rows
    assert "Retry-After" in unjudged[0]["explanation"]
    assert "--judge-timeout" in unjudged[0]["explanation"]
    assert all(r["score"] is not None for r in rows if r is not unjudged[0])


@pytest.mark.slow  # two judged runs: CI runs it (.ci/run)
def test_an_answer_adk_cannot_read_is_not_replayed_and_the_user_is_told(
    work: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """final_response_match_v2's judge answers with no label: those turns are NOT_EVALUATED,
    stderr says the answers were not kept, and the next run asks the model again (before, the
    unreadable answers were replayed for ever, --no-judge-cache or not)."""
    work.rule = lambda seen: (
        "I would rather not say." if "is_the_agent_response_valid" in (seen.prompt) else rule(seen)
    )
    assert _run(fmt="json", quiet=False) == 1
    out, err = capsys.readouterr()
    first = {r["metric"]: r for r in json.loads(out)["rows"]}
    assert first["final_response_match_v2"]["status"] == "NOT_EVALUATED"
    assert "6 judge answers could not be read" in err and "a next run asks" in err
    made = len(work.seen)
    work.rule = rule
    assert _run(fmt="json") in (0, 1)
    second = {r["metric"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert len(work.seen) == made + 6  # the six unreadable answers, asked again
    assert second["final_response_match_v2"]["score"] == pytest.approx(1 / 3)


def test_no_judge_cache_with_replay_only_is_a_usage_error(
    work: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("--no-judge-cache", "--replay-only") == 2
    assert "give one of them" in capsys.readouterr().err
    assert not work.seen


def test_a_judge_outage_is_said_once_at_the_end_with_what_it_left_unjudged(
    work: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    work.fail_next(503, count=10_000, retry_after="0")
    assert _run(quiet=False) == 1
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "judging stopped" in line]
    assert len(said) == 1 and said[0].endswith("results NOT_EVALUATED"), err
