"""Every sample runs as a user would run it: as-is on an embedded emulator, and with --project
against a target (here a running emulator, reached through PLATFORM_EVAL_EMULATOR_HOST); the
README's example is the quick-start sample."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from platform_eval import formats
from platform_eval.emulator import Emulator

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "samples").glob("*.py"))


def _run(
    sample: str, *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GOOGLE_CLOUD_PROJECT", "PLATFORM_EVAL_EMULATOR_HOST")
    }
    return subprocess.run(
        [sys.executable, str(ROOT / "samples" / sample), *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        # What a sample keeps in a temporary folder (sessions, reports) stays in the test's.
        env={**clean, "TMPDIR": str(cwd), **(env or {})},
    )


# Each sample's own test below runs it as is and reads what it printed; this one, for every
# sample at once, is for CI.
@pytest.mark.slow
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_sample_runs_as_is(sample: Path, tmp_path: Path) -> None:
    done = _run(sample.name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_sample_runs_with_a_project(
    sample: Path, tmp_path: Path, emulator: Emulator, project: str
) -> None:
    env = {"PLATFORM_EVAL_EMULATOR_HOST": emulator.host_port}
    if sample.name == "failure_analysis.py":
        # Its target writes scenarios and clusters failures with a judge model: an emulator
        # with one, the fake model also the agent's.
        pytest.importorskip("google.adk")
        from agent_script import synthesis_rule
        from fake_gemini import model_judges

        with (
            model_judges(synthesis_rule) as (judges, fake),
            Emulator(judges=judges) as judged,
        ):
            env = {
                "PLATFORM_EVAL_EMULATOR_HOST": judged.host_port,
                "GOOGLE_GEMINI_BASE_URL": fake.url,
                "GOOGLE_API_KEY": "test-key",
            }
            done = _run(sample.name, "--project", project, cwd=tmp_path, env=env)
            assert done.returncode == 0, done.stderr
            with judged.client(project) as client:
                assert list(client.list_sets())
        return
    with contextlib.ExitStack() as stack:
        # Its agent needs a model.
        if sample.name == "evaluate_live_agent.py":
            pytest.importorskip("google.adk")
            from agent_script import voice_rule
            from fake_gemini_live import fake_gemini_live

            live = stack.enter_context(fake_gemini_live(voice_rule))
            env |= _live_env(live)
        if sample.name in ("run_agent.py", "mocked_tools.py", "evaluate_served_agent.py"):
            pytest.importorskip("google.adk")
            from agent_script import travel_rule
            from fake_gemini import fake_gemini

            fake = stack.enter_context(fake_gemini(travel_rule))
            env |= {"GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "test-key"}
        done = _run(sample.name, "--project", project, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    with emulator.client(project) as client:
        if sample.name == "optimize_agent.py":
            # Its candidates are scored on this machine (the project is not asked).
            assert not list(client.list_sets())
            return
        if sample.name == "judged_eval.py":
            # No judge model: its metrics are refused before anything is uploaded.
            assert "nothing was uploaded" in done.stdout
            assert not list(client.list_sets())
            return
        assert list(client.list_sets()), "the sample wrote nothing to the project it was given"


@pytest.mark.slow
def test_quickstart_prints_every_candidate_score(tmp_path: Path) -> None:
    done = _run("quickstart.py", cwd=tmp_path)
    scores = {
        key: float(value)
        for key, value in (line.rsplit(" ", 1) for line in done.stdout.strip().splitlines())
    }
    # ROUGE-1 without stemming: reference {it, is, sunny, in, paris}, response
    # {sunny, in, paris, today}: precision 3/4, recall 3/5.
    precision, recall = 3 / 4, 3 / 5
    assert scores == {
        "weather_agent exact_match": 0.0,
        "weather_agent rouge_1": pytest.approx(2 * precision * recall / (precision + recall)),
        "weather_agent tool_call_valid": 1.0,
        # The one rubric, TEXT_CONTAINS "Paris", is decided by the local judge: passed.
        "weather_agent final_response_quality_v1": 1.0,
    }


def test_readme_example_is_the_quickstart_sample() -> None:
    readme = (ROOT / "README.md").read_text()
    example = re.search(r"## In Python\n\n```python\n(.*?)```", readme, re.S)
    assert example is not None
    # The whole sample but its docstring: it runs as pasted.
    assert (ROOT / "samples" / "quickstart.py").read_text().endswith(example.group(1))
    assert example.group(1).startswith("import argparse")


@pytest.mark.slow
def test_offline_eval_from_traces_scores_the_recorded_conversation(tmp_path: Path) -> None:
    done = _run("offline_eval_from_traces.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert "3 turns, tools ['get_weather', 'get_weather']" in lines[0]
    assert "run SUCCEEDED: 1 matched" in lines
    assert "paris-then-oslo agent tool_trajectory_avg_score NOT_CHECKED 1.000" in lines
    assert "paris-then-oslo agent rubric_based_final_response_quality_v1 NOT_CHECKED 1.000" in lines


@pytest.mark.slow
def test_upload_twice_uploads_once(tmp_path: Path) -> None:
    done = _run("upload_eval_set.py", cwd=tmp_path)
    first, second = done.stdout.splitlines()[:2]
    assert first.endswith(": 1 item uploaded")
    assert second.endswith(": the item was already there: nothing uploaded")
    assert first.split(": ")[1] == second.split(": ")[1]  # the same set
    assert "eval case paris-then-oslo" in done.stdout


@pytest.mark.slow
def test_rubric_verdicts_with_their_reasoning(tmp_path: Path) -> None:
    done = _run("fetch_rubric_verdicts.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    verdicts = re.findall(r"\] \S+ (\S+): (PASS|FAIL)", done.stdout)
    assert sorted(verdicts) == [
        ("looks-up-the-weather", "PASS"),
        ("no_apology", "PASS"),  # from eval_config.json, not the eval set
        ("stays-polite", "PASS"),
    ]
    assert "reasoning: get_weather was called (2 times)" in done.stdout


@pytest.mark.slow
def test_migrated_dataset_reads_back(tmp_path: Path) -> None:
    done = _run("migrate_evalsets.py", "--out", str(tmp_path / "datasets"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    dataset = formats.load_dataset(tmp_path / "datasets" / "weather-dataset.json")
    assert len(dataset.eval_cases) == 1
    assert "not carried: eval set name/description" in done.stdout
    assert "-> 1 eval cases -> projects/" in done.stdout


@pytest.mark.slow
def test_compare_lists_the_regression_and_can_fail_on_it(tmp_path: Path) -> None:
    done = _run("compare_runs.py", "--fail-on-regression", cwd=tmp_path)
    # One case: too few for a significance test; the any-drop rule decides, and says so.
    assert done.returncode == 1, done.stderr
    assert "1 paired case is too few for the permutation test" in done.stdout
    done = _run("compare_runs.py", "--strict", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "regressed:" in done.stdout
    assert "rubric no_apology: 1.0 -> 0.0" in done.stdout
    assert re.search(r"tool_trajectory_avg_score\s+1\.000\s+1\.000\s+\+0\.000", done.stdout)


@pytest.mark.slow
def test_ci_gate_writes_junit_and_the_job_summary(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    done = _run(
        "ci_gate.py",
        "--junit",
        str(tmp_path / "junit.xml"),
        "--config",
        str(ROOT / "samples" / "data" / "service_eval_config.json"),
        cwd=tmp_path,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.returncode == 0, done.stderr
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "3" and suite.get("failures") == "0"
    assert summary.read_text().startswith("## platform-eval: PASSED")


@pytest.mark.slow
def test_ci_gate_fails_on_a_missed_threshold(tmp_path: Path) -> None:
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps({"criteria": {"response_match_score": 0.99}}))
    done = _run("ci_gate.py", "--config", str(strict), cwd=tmp_path)
    assert done.returncode == 1
    assert "response_match_score" in done.stdout and "0.963 < 0.99" in done.stdout


@pytest.mark.slow
def test_judged_eval_judges_with_the_model_then_replays_from_the_cache(tmp_path: Path) -> None:
    from fake_gemini import adk_judge_rule, fake_gemini

    with fake_gemini(adk_judge_rule) as fake:
        done = _run(
            "judged_eval.py",
            "--judge-model",
            "gemini-2.5-flash",
            cwd=tmp_path,
            env={"GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "test-key"},
        )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.split("== the same run again")
    made = len(fake.seen)
    assert made > 0 and f"judge: {made} model calls, 0 answered from the cache" in first
    assert f"judge: 0 model calls, {made} answered from the cache" in second
    assert "rubric states_the_weather:" in second and "NOT_EVALUATED" not in second


@pytest.mark.slow
def test_run_agent_runs_the_agent_and_shows_each_cases_spread(tmp_path: Path) -> None:
    pytest.importorskip("google.adk")
    from agent_script import travel_rule
    from fake_gemini import fake_gemini

    with fake_gemini(travel_rule) as fake:
        done = _run(
            "run_agent.py",
            cwd=tmp_path,
            env={"GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "test-key"},
        )
    assert done.returncode == 0, done.stderr
    assert "agent ran 8 of 8 case runs" in done.stdout
    assert len(fake.seen) == 2 * 9  # two runs of every case, every turn sent to the model
    spread = done.stdout.split("per case, over its candidates:", 1)[1]
    assert re.search(r"weather_then_booking\s+response_match_score\s+2\s+0\.833\s+0\.000", spread)
    folder = re.search(r"sessions kept in (\S+):", done.stdout)
    assert folder and len(list(Path(folder.group(1)).glob("*.json"))) == 8
    # Repeated runs' reliability (pass@k, pass^k, flaky cases) and what the runs cost and took.
    assert "reliability over 2 runs" in done.stdout
    assert re.search(r"agent: 18 model calls, \d+ prompt, \d+ output", done.stdout)
    assert "latency p50" in done.stdout


@pytest.mark.slow
def test_a_sample_sees_the_runs_the_cli_made_in_the_same_folder(tmp_path: Path) -> None:
    data = ROOT / "samples" / "data"
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "platform_eval.cli",
            "run",
            str(data / "weather.evalset.json"),
            "--traces",
            str(data / "weather_traces.otlp.json"),
            "--config",
            str(data / "eval_config.json"),
            "--no-wait",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "PLATFORM_EVAL_EMULATOR_HOST"},
    )
    assert cli.returncode == 0, cli.stderr
    run = cli.stdout.strip()
    done = _run("fetch_rubric_verdicts.py", run, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "looks-up-the-weather" in done.stdout and "Traceback" not in done.stderr


def _table_scores(stdout: str) -> dict[tuple[str, str], str]:
    rows = [line.split() for line in stdout.splitlines() if line.count("  ") > 3]
    return {(row[0], row[2]): row[3] for row in rows if len(row) > 3 and row[1] == "agent"}


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_agents_cli_project_grades_its_trace_file_with_its_code_metrics(tmp_path: Path) -> None:
    done = _run("agents_cli_project.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "basic-dataset.json: ok" in done.stdout and "eval_config.yaml: ok" in done.stdout
    scores = _table_scores(done.stdout)
    assert scores[("weather_paris", "rouge_1")] == "1.000"
    assert scores[("weather_paris", "used_a_tool")] == "1.000"
    assert scores[("book_rome", "used_a_tool")] == "0.000"
    assert scores[("book_rome", "answer_words")] == "9.000"


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_agents_cli_project_generates_a_trace_file_with_the_agent_first(tmp_path: Path) -> None:
    pytest.importorskip("google.adk")
    from agent_script import travel_rule
    from fake_gemini import fake_gemini

    with fake_gemini(travel_rule) as fake:
        env = {"GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "test-key"}
        agent = str(ROOT / "samples" / "agent" / "travel_agent")
        done = _run("agents_cli_project.py", "--agent", agent, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "wrote 2 cases to artifacts/traces/traces_sample.json" in done.stdout
    assert (tmp_path / "artifacts" / "traces" / "traces_sample.json").is_file()
    scores = _table_scores(done.stdout)
    assert scores[("weather_paris", "used_a_tool")] == "1.000"  # the agent called get_weather


@pytest.mark.slow
def test_failure_analysis_writes_scenarios_runs_the_agent_and_clusters_its_failures(
    tmp_path: Path,
) -> None:
    pytest.importorskip("google.adk")
    from agent_script import synthesis_rule
    from fake_gemini import fake_gemini

    with fake_gemini(synthesis_rule) as fake:
        env = {"GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "test-key"}
        done = _run("failure_analysis.py", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("4 scenarios written to ")
    assert "agent ran 4 of 4 cases" in lines
    assert "2 failing item(s), 1 cluster(s)" in lines[2]
    assert re.match(r"Factuality and Grounding\s+Missing forecast\s+2\s+100%", lines[4])


@pytest.mark.slow
def test_the_mocked_tools_sample_answers_every_call_from_its_file(tmp_path: Path) -> None:
    """Every tool call of the travel agent answered by samples/data/travel_mocks.yaml, none run,
    and the scores those of the real tools (the file answers what they would)."""
    pytest.importorskip("google.adk")
    from agent_script import travel_rule
    from fake_gemini import fake_gemini

    with fake_gemini(travel_rule) as fake:
        env = {"GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "test-key"}
        done = _run("mocked_tools.py", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "tool calls: 4 mocked, 0 ran the real tool" in done.stdout
    assert (
        '  weather_then_booking#1: book_hotel({"city": "Rome", "nights": 2}) mocked' in done.stdout
    )
    scores = {
        tuple(line.split()[:3]): line.split()[3]
        for line in done.stdout.splitlines()
        if line.split()[:1]
        and line.split()[0].startswith(("weather_", "who_am_i"))
        and len(line.split()) > 3
        and line.split()[1] == "agent"
    }
    # samples/agent's figures with the real tools (tests/agents/test_agent_runs.py EXPECTED).
    assert scores[("weather_then_booking", "agent", "response_match_score")] == "0.833"
    assert scores[("weather_oslo", "agent", "response_match_score")] == "0.571"
    assert scores[("weather_paris", "agent", "tool_trajectory_avg_score")] == "1.000"


@pytest.mark.slow
def test_the_judge_agreement_sample_sets_the_judge_beside_the_labels(tmp_path: Path) -> None:
    done = _run("judge_agreement.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "judged verdicts to label" in done.stdout
    assert "rubric_based_final_response_quality_v1 / no_apology" in done.stdout
    gated = _run("judge_agreement.py", "--min-kappa", "0.6", cwd=tmp_path)
    # The sample labels agree with the judge throughout, one label class: kappa is undefined,
    # and a gate does not pass on an undefined kappa.
    assert gated.returncode == 1, gated.stderr
    assert "--min-kappa: all: kappa undefined < 0.6" in gated.stdout


@pytest.mark.slow
def test_the_served_agent_sample_evaluates_the_sample_agent_through_its_api(
    tmp_path: Path,
) -> None:
    pytest.importorskip("google.adk")
    from agent_script import travel_rule
    from fake_gemini import fake_gemini

    with fake_gemini(travel_rule) as fake:
        done = _run(
            "evaluate_served_agent.py",
            cwd=tmp_path,
            env={"GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "test-key"},
        )
    assert done.returncode == 0, done.stderr
    assert "agent ran 4 of 4 cases" in done.stdout
    assert re.search(r"weather_paris\s+agent\s+tool_trajectory_avg_score\s+1", done.stdout)
    assert len(fake.seen) == 9  # every turn of the four cases, sent by the server to the model


@pytest.mark.slow
def test_the_images_sample_keeps_the_photo_and_shows_it(tmp_path: Path) -> None:
    done = _run("images_in_cases.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the stored request keeps the photo: ['image/png']" in done.stdout
    assert re.search(r"sky_photo\s+agent\s+rouge_1\s+0\.727", done.stdout)
    assert "images-report.html: the photo shown inline: True" in done.stdout
    page = (tmp_path / "images-report.html").read_text()
    assert page.count("data:image/png;base64,") >= 1


def _live_env(live: Any) -> dict[str, str]:
    """What the live sample needs to reach the fake Gemini Live server (over TLS)."""
    return {
        "GOOGLE_GEMINI_BASE_URL": live.url,
        "GOOGLE_API_KEY": "test-key",
        "SSL_CERT_FILE": live.cert_file,
    }


@pytest.mark.slow
def test_the_live_sample_scores_the_transcript_and_keeps_the_audio(tmp_path: Path) -> None:
    pytest.importorskip("google.adk")
    from agent_script import voice_rule
    from fake_gemini_live import fake_gemini_live

    with fake_gemini_live(voice_rule, first_delay=0.01) as live:
        # The gate's bound far off: a busy machine's latency is no failure of the sample.
        done = _run(
            "evaluate_live_agent.py", "--first-audio-p95", "60", cwd=tmp_path, env=_live_env(live)
        )
    assert done.returncode == 0, done.stderr
    assert "agent ran 2 of 2 cases" in done.stdout
    assert re.search(r"weather_paris\s+agent\s+tool_trajectory_avg_score\s+1", done.stdout)
    assert re.search(r"greeting: first audio per turn \(s\): \d+\.\d+, \d+\.\d+", done.stdout)
    assert "the agent's audio: 3 files in live-sessions/" in done.stdout
    assert done.stdout.strip().endswith("PASSED")
    assert [s.setup["model"] for s in live.sessions] == ["models/gemini-live-2.5-flash-preview"] * 2


@pytest.mark.slow
def test_the_optimize_sample_writes_its_decision_and_the_statistic(tmp_path: Path) -> None:
    """The fake model answers the travel agent alike whatever its instruction: whatever GEPA
    proposes scores as the original, so the original is kept, and the report says why."""
    pytest.importorskip("google.adk")
    pytest.importorskip("gepa")
    from agent_script import travel_rule
    from fake_gemini import fake_gemini

    with fake_gemini(travel_rule) as fake:
        done = _run(
            "optimize_agent.py",
            "--output",
            str(tmp_path / "out"),
            cwd=tmp_path,
            env={"GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "test-key"},
        )
    assert done.returncode == 0, done.stderr
    assert "kept the original" in done.stdout
    assert (tmp_path / "out" / "instruction.txt").exists()
    report = json.loads((tmp_path / "out" / "optimize.json").read_text())
    assert report["accepted"] is False and report["engine"] == "gepa"
