"""A judge that never answers cannot hold anything up: each call has a deadline, a cancelled
run's calls end at once, and a stopping emulator does not wait for them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import agent_data, reply, request_item, user
from fake_gemini import model_judges
from google.genai import types
from paths import SAMPLE_DATA
from sockets import until

from platform_eval.emulator import Emulator
from platform_eval.judges.service import PROBE_ATTEMPTS
from platform_eval.metrics.model_judge import CallLabel, JudgeUnavailableError, evaluation

ASK = [types.Content(role="user", parts=[types.Part(text="Is the sky blue?")])]
LABEL = CallLabel("m", "case", "agent")


@pytest.fixture
def silence() -> Iterator[threading.Event]:
    """Set to let a silent judge go at the end of the test."""
    released = threading.Event()
    yield released
    released.set()


def _silent(released: threading.Event) -> Any:
    def never(seen: Any) -> str:
        released.wait(60)
        return "too late"

    return never


async def _at_once(judging: Any, count: int) -> list[Any]:
    """``count`` calls of as many cases made at once; each one's answer or error."""
    calls = [
        judging.generate("gemini-test", ASK, None, sample=0, label=CallLabel("m", f"c{n}", "a"))
        for n in range(count)
    ]
    return await asyncio.gather(*calls, return_exceptions=True)


def test_a_call_that_gets_no_answer_fails_at_its_deadline(silence: threading.Event) -> None:
    with model_judges(_silent(silence), call_timeout=0.5) as (judges, _):
        judging = judges.model
        started = time.monotonic()
        with pytest.raises(JudgeUnavailableError, match=r"did not answer within 0.5 s"):
            judging.run(judging.generate("gemini-test", ASK, None, sample=0, label=LABEL))
        # Not the 60 s the silent judge holds the call: a margin no busy machine uses up.
        assert time.monotonic() - started < 30


def test_a_silent_judge_is_waited_for_once_not_once_a_call(silence: threading.Event) -> None:
    """The first call is the probe, the others wait behind it: when it gets no answer, judging
    stops for all of them, rather than each waiting out its own deadline in turn."""
    with model_judges(_silent(silence), call_timeout=0.5) as (judges, fake):
        judging = judges.model
        failures = judging.run(_at_once(judging, 6))
    assert len(fake.seen) == 1  # the others never waited out a deadline of their own
    assert all(isinstance(f, JudgeUnavailableError) for f in failures)
    assert str(failures[-1]).startswith("judging stopped: the first call to the judge model")
    assert "did not answer within 0.5 s" in str(failures[-1])


def test_cancelling_an_evaluation_ends_its_calls_and_refuses_more(
    silence: threading.Event,
) -> None:
    with model_judges(_silent(silence)) as (judges, fake):
        judging = judges.model
        failures: list[str] = []

        def ask() -> None:
            with evaluation("runs/1"):
                try:
                    judging.run(judging.generate("gemini-test", ASK, None, sample=0, label=LABEL))
                except JudgeUnavailableError as exc:
                    failures.append(str(exc))

        asking = threading.Thread(target=ask)
        asking.start()
        until(lambda: fake.seen)  # the call is under way
        judging.cancel("runs/1")
        asking.join(5)
        assert not asking.is_alive() and failures == [
            "runs/1 was cancelled while it was being judged"
        ]
        ask()  # a later call of the cancelled evaluation is refused at once
        assert len(failures) == 2


SAID = agent_data([user("hi"), reply("hello there")])


def test_a_run_whose_judge_is_silent_can_be_cancelled_and_does_not_hold_the_next(
    silence: threading.Event,
) -> None:
    judged = {
        "metric": "faithful",
        "metricConfig": {"llmBasedMetricSpec": {"metricPromptTemplate": "Rate {response}"}},
    }
    with (
        model_judges(_silent(silence)) as (judges, fake),
        Emulator(judges=judges) as emulator,
        emulator.client("p") as client,
    ):
        item = client.create_item(
            request_item(
                "x",
                golden={"text": "hello there"},
                candidates=[{"candidate": "a", "agentData": SAID}],
            )
        )
        evaluation_set = client.create_set(display_name="s", items=[item])
        stuck = client.create_run(evaluation_set=evaluation_set, metrics=[judged])
        until(lambda: fake.seen)  # under way, waiting on the judge
        later = client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
        started = time.monotonic()
        client.cancel_run(stuck)
        cancelled = client.wait_for_run(stuck, poll_interval=0.05, timeout=10)
        # Not the 60 s the silent judge holds the call: a margin no busy machine uses up.
        assert cancelled.state == "CANCELLED" and time.monotonic() - started < 30
        assert client.wait_for_run(later, poll_interval=0.05, timeout=10).state == "SUCCEEDED"


def _judged_command(work: Path, fake_url: str) -> tuple[list[str], dict[str, str]]:
    """`platform-eval run` on the sample with one judged criterion, its judge at ``fake_url``:
    the command and its environment."""
    config = {
        "criteria": {
            "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"num_samples": 1}}
        }
    }
    (work / "config.json").write_text(json.dumps(config))
    env = dict(os.environ, GOOGLE_GEMINI_BASE_URL=fake_url, GOOGLE_API_KEY="test-key")
    env.pop("GOOGLE_GENAI_USE_VERTEXAI", None)
    command = [
        *(sys.executable, "-m", "platform_eval.cli", "-q", "--judge-model", "gemini-test"),
        *("run", str(SAMPLE_DATA / "weather.evalset.json")),
        *("--traces", str(SAMPLE_DATA / "weather_traces.otlp.json"), "--config", "config.json"),
    ]
    return command, env


@pytest.mark.slow  # a whole command in a process of its own
def test_the_command_gives_up_waiting_and_exits_though_its_judge_is_silent(
    silence: threading.Event, tmp_path: Path
) -> None:
    """`run --timeout 2` with a judge that never answers: the message, and the process ends."""
    from fake_gemini import fake_gemini

    with fake_gemini(_silent(silence)) as fake:
        command, env = _judged_command(tmp_path, fake.url)
        started = time.monotonic()
        done = subprocess.run(
            [*command, "--timeout", "2"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        took = time.monotonic() - started
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert took < 20, (took, done.stderr)


def test_an_outage_stops_judging_after_ten_tries_failing_alike() -> None:
    """A judge that answered, then answers 503 to everything: ten tries in a row fail alike,
    then judging stops and every later call says why at once, instead of waiting out each
    call's retries."""
    with model_judges(lambda seen: "yes") as (judges, fake):
        judging = judges.model
        assert judging.run(judging.generate("gemini-test", ASK, None, sample=0, label=LABEL))
        fake.fail_next(503, count=10_000, retry_after="0")
        failures = []
        for case in range(30):
            label = CallLabel("m", f"case-{case}", "agent")
            with pytest.raises(JudgeUnavailableError) as failed:
                judging.run(judging.generate("gemini-test", ASK, None, sample=1, label=label))
            failures.append(str(failed.value))
    assert len(fake.seen) == 1 + 10  # the tenth try in a row stopped it
    assert failures[-1].startswith("judging stopped after 10 judge model tries in a row")
    assert "503" in failures[-1]


def test_a_judge_down_from_the_start_is_found_by_the_first_calls_tries_alone() -> None:
    """503 to everything from the first call: the first call is a probe, tried alone (the
    other calls wait for it), and when its tries are spent judging stops for every call."""
    with model_judges(lambda seen: "never") as (judges, fake):
        fake.fail_next(503, count=10_000, retry_after="0")
        judging = judges.model
        failures = judging.run(_at_once(judging, 8))
    assert len(fake.seen) == PROBE_ATTEMPTS  # one call's tries, no other call's
    assert all(isinstance(f, JudgeUnavailableError) for f in failures)
    assert {str(f) for f in failures[1:]} == {str(failures[0])}
    assert str(failures[0]).startswith("judging stopped: the first call to the judge model failed")
    assert "503" in str(failures[0])


def test_a_quotas_429s_are_retried_and_never_stop_judging() -> None:
    """Eleven 429s in a row (a quota saying "slower"): the first call gives up after its six
    tries, and the second is answered; 503s alike would have stopped judging at ten."""
    with model_judges(lambda seen: "yes") as (judges, fake):
        fake.fail_next(429, count=11, retry_after="0")
        judging = judges.model
        with pytest.raises(JudgeUnavailableError, match="stayed busy after 6 tries"):
            judging.run(judging.generate("gemini-test", ASK, None, sample=0, label=LABEL))
        reply = judging.run(judging.generate("gemini-test", ASK, None, sample=1, label=LABEL))
    assert reply.text == "yes"


@pytest.mark.parametrize("status", [404, 401, 403])
def test_the_first_call_is_a_probe_a_model_that_is_not_there_stops_judging_at_once(
    status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unknown model (404) or no access (401, 403) on the very first call: judging stops
    there, one line naming the model, the endpoint and the cause, not ten tries later."""
    with model_judges(lambda seen: "never") as (judges, fake):
        # Where the product's judge reads its endpoint (model_judges passes it to the client).
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        fake.fail_next(status, count=10_000)
        judging = judges.model
        failures = []
        for case in range(5):
            label = CallLabel("m", f"case-{case}", "agent")
            with pytest.raises(JudgeUnavailableError) as failed:
                judging.run(judging.generate("gemini-nope", ASK, None, sample=0, label=label))
            failures.append(str(failed.value))
    assert len(fake.seen) == 1
    first = failures[0]
    assert first.startswith("judging stopped: the first call to the judge model failed")
    assert "gemini-nope" in first and str(status) in first and "GOOGLE_GEMINI_BASE_URL" in first
    assert failures[-1] == first


def test_after_an_answer_a_404_is_one_failure_not_a_stop() -> None:
    with model_judges(lambda seen: "yes") as (judges, fake):
        judging = judges.model
        assert judging.run(judging.generate("gemini-test", ASK, None, sample=0, label=LABEL))
        fake.fail_next(404, count=1)
        with pytest.raises(JudgeUnavailableError, match="failed: ClientError"):
            judging.run(judging.generate("gemini-test", ASK, None, sample=1, label=LABEL))
        reply = judging.run(judging.generate("gemini-test", ASK, None, sample=2, label=LABEL))
    assert reply.text == "yes"


def _two_calls_after_one_429(asked: str) -> list[Any]:
    """Two calls, one after the other, of a judge whose first answer is a 429 with
    ``Retry-After: asked``; each call's answer or error."""
    with model_judges(lambda seen: "yes", call_timeout=5) as (judges, fake):
        fake.fail_next(429, retry_after=asked)
        judging = judges.model
        outcomes: list[Any] = []

        def ask() -> None:
            for sample in range(2):
                label = CallLabel("m", f"case-{sample}", "agent")
                try:
                    call = judging.generate("gemini-test", ASK, None, sample=sample, label=label)
                    outcomes.append(judging.run(call).text)
                except JudgeUnavailableError as exc:
                    outcomes.append(exc)

        asking = threading.Thread(target=ask, daemon=True)
        asking.start()
        # Generous for a busy machine: before the fix the first call waited the whole wait.
        asking.join(60)
        assert not asking.is_alive(), "the judge waited out the Retry-After"
    return outcomes


def test_a_retry_after_longer_than_a_judge_call_may_take_fails_that_call_at_once() -> None:
    """A 429 asking for a day (a spent daily quota): that call is not judged, in one line naming
    the wait and --judge-timeout, and the next call is not held back by it."""
    first, second = _two_calls_after_one_429("99999")
    assert isinstance(first, JudgeUnavailableError)
    said = str(first)
    assert "99999 s (Retry-After)" in said and "--judge-timeout" in said and "\n" not in said
    assert second == "yes"


def test_a_retry_after_of_inf_is_no_wait_a_server_can_mean_the_usual_backoff_applies() -> None:
    assert _two_calls_after_one_429("inf") == ["yes", "yes"]
