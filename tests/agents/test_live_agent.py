"""``run --agent-mode live``: each case one live (bidi) conversation, as ADK's ``/run_live``
holds it, the agent's model the fake Gemini Live server (tests/fake_gemini_live.py: the Live
API's WebSocket over TLS, as google-genai speaks it). In-process through ``Runner.run_live``
and on google-adk's own api_server's ``/run_live`` WebSocket: the transcript scored by text
metrics and a judge, the audio kept, the time to first and last audio per turn reported and
usable as thresholds; a turn that never ends fails its case, never scored on half an answer."""

from __future__ import annotations

import base64
import json
import logging
import re
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from agent_script import APP_DETAILS_CONFIG, voice_rule
from conftest import work_offline
from fake_gemini import adk_judge_rule, judge_requests
from fake_gemini_live import FakeGeminiLive, LiveAnswer, fake_gemini_live, heard, speech
from served_agents import adk_api_server

from platform_eval.agents.live import LIVE_KEY, LiveConversation, LiveStream, TurnBoundary
from platform_eval.cli import main

AGENT = '''
from google.adk.agents import Agent


def get_weather(city: str) -> dict:
    """Today's weather in a city."""
    return {"city": city, "sky": "sunny"}


root_agent = Agent(
    name="weather_voice",
    model="gemini-live-test",
    instruction="Answer in one short sentence.",
    tools=[get_weather],
)
'''


def _turn(text: str, answer: str, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {
        "invocation_id": f"t-{len(text)}",
        "user_content": {"role": "user", "parts": [{"text": text}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
    }
    if tools:
        turn["intermediate_data"] = {"tool_uses": tools}
    return turn


def _spoken(text: str, answer: str) -> dict[str, Any]:
    """A turn whose user speaks: 16 kHz PCM in a WAV file, as a case gives audio."""
    pcm = speech(text) + b"\0" * 64  # the speech, then a breath before the second of silence
    path = Path("spoken.wav")
    with wave.open(str(path), "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(16000)
        file.writeframes(pcm)
    data = base64.b64encode(path.read_bytes()).decode()
    part = {"inline_data": {"mime_type": "audio/wav", "data": data}}
    turn = _turn(text, answer)
    turn["user_content"] = {"role": "user", "parts": [part]}
    return turn


EVAL_SET = {
    "eval_set_id": "voice",
    "eval_cases": [
        {
            "eval_id": "greeting",
            "conversation": [
                _turn("hello there", "Hello! You said hello there."),
                _turn("thanks a lot", "Glad to help. You said thanks a lot."),
            ],
        },
        {
            "eval_id": "weather",
            "conversation": [
                _turn(
                    "what is the weather in Paris",
                    "It is sunny in Paris.",
                    [{"name": "get_weather", "args": {"city": "Paris"}}],
                )
            ],
        },
    ],
}

CONFIG = {
    "criteria": {
        "response_match_score": 0.9,
        "tool_trajectory_avg_score": 1.0,
        "final_response_match_v2": {"threshold": 0.0, "judge_model_options": {"num_samples": 1}},
        # Shown the agent's instruction and tools, as its live session was set up.
        "rubric_based_final_response_quality_v1": APP_DETAILS_CONFIG["criteria"][
            "rubric_based_final_response_quality_v1"
        ],
    }
}


@pytest.fixture
def voice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGeminiLive]:
    work_offline(tmp_path, monkeypatch)
    package = tmp_path / "agents" / "weather_voice"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from . import agent\n")
    (package / "agent.py").write_text(AGENT)
    (tmp_path / "voice.evalset.json").write_text(json.dumps(EVAL_SET))
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    with fake_gemini_live(voice_rule, adk_judge_rule, first_delay=0.01) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        # google-genai always opens the Live socket over TLS: it trusts the fake's certificate.
        monkeypatch.setenv("SSL_CERT_FILE", fake.cert_file)
        yield fake


#: The voice agent played live, scored by one metric.
LIVE_ONE_METRIC = [
    "--agent", "agents/weather_voice", "--agent-mode", "live", "--metrics", "response_match_score"
]  # fmt: skip


def _run(*args: str) -> int:
    common = ["--config", "eval_config.json", "--format", "json", "-o", "report.json"]
    return main(
        [
            "-q",
            "--judge-model",
            "gemini-judge",
            "--no-judge-cache",
            "run",
            "voice.evalset.json",
            *args,
            *common,
        ]
    )


def _rows() -> list[dict[str, Any]]:
    rows = json.loads(Path("report.json").read_text())["rows"]
    keep = ("evalCaseId", "metric", "score", "status")
    return sorted(({k: r.get(k) for k in keep} for r in rows), key=lambda r: str(r.values()))


@pytest.mark.slow  # two live runs, an api_server and a replay: CI runs it (.ci/run)
def test_a_live_agent_is_scored_on_its_transcript_here_and_served_alike(
    voice: FakeGeminiLive,
) -> None:
    assert _run("--agent", "agents/weather_voice", "--agent-mode", "live") in (0, 1)
    here = _rows()
    judged_here = judge_requests(voice.rest.seen)
    # The rubric judge is shown the agent's instruction, as its live session was set up.
    assert any("Answer in one short sentence." in r for r in judged_here)
    by_metric = {(r["evalCaseId"], r["metric"]): r for r in here}
    assert by_metric["weather", "tool_trajectory_avg_score"]["score"] == 1.0
    assert by_metric["greeting", "response_match_score"]["score"] == 1.0
    assert by_metric["greeting", "final_response_match_v2"]["status"] in ("PASSED", "FAILED")
    # The judge read the transcript: the spoken answer, as text.
    judged = [s.prompt for s in voice.rest.seen]
    assert any("Glad to help. You said thanks a lot." in p for p in judged)
    # The model was set up as ADK's /run_live sets it up: audio out, transcribed.
    setup = voice.sessions[0].setup
    assert setup["generationConfig"]["responseModalities"] == ["AUDIO"]
    assert "outputAudioTranscription" in setup
    usage = json.loads(Path("report.json").read_text())["agentUsage"]
    greeting = next(c for c in usage["perCase"] if c["evalCaseId"] == "greeting")
    assert len(greeting["firstAudioSeconds"]) == 2 and len(greeting["lastAudioSeconds"]) == 2
    assert all(
        0 < f <= last
        for f, last in zip(greeting["firstAudioSeconds"], greeting["lastAudioSeconds"], strict=True)
    )
    assert usage["first_audio_p95_s"] > 0

    voice.rest.seen.clear()
    with adk_api_server(Path("agents")) as served:
        code = _run("--agent", served, "--agent-mode", "live", "--save-sessions", "sessions")
        assert code in (0, 1)
        # The judges were asked what they are asked of the agent run here, byte for byte.
        assert judge_requests(voice.rest.seen) == judged_here
        theirs = {
            case["eval_id"]: _agents_cli_live(served, case) for case in EVAL_SET["eval_cases"]
        }
    assert _rows() == here
    # agents-cli's own live route (eval generate --mode adk_live) on the same server hears the
    # same conversations: per turn, the same transcript and the same tool calls.
    assert theirs["weather"] == [(["It is sunny in Paris."], [("get_weather", {"city": "Paris"})])]
    for eval_id, turns in theirs.items():
        ours = _said(json.loads(Path(f"sessions/{eval_id}.json").read_text()))
        assert ours == turns, eval_id
    saved = sorted(p.name for p in Path("sessions").iterdir())
    assert saved == [
        "greeting.json",
        "greeting.turn1.wav",
        "greeting.turn2.wav",
        "weather.json",
        "weather.turn1.wav",
    ]
    with wave.open("sessions/greeting.turn2.wav") as kept:
        assert kept.getframerate() == 24000
        assert heard(kept.readframes(kept.getnframes())) == "Glad to help. You said thanks a lot."
    # A saved live session is read back as any, scored as the run was, its timings kept.
    session = json.loads(Path("sessions/greeting.json").read_text())
    timings = [
        e["customMetadata"][LIVE_KEY]
        for e in session["events"]
        if LIVE_KEY in (e.get("customMetadata") or {})
    ]
    assert [t["turn"] for t in timings] == [1, 2]
    assert _run("--traces", "sessions") in (0, 1)
    assert _rows() == here


def _agents_cli_live(url: str, case: dict[str, Any]) -> list[tuple[list[str], list[Any]]]:
    """agents-cli's ``run_case_live`` on the served agent: per turn, the agent's words and its
    tool calls (name, args)."""
    from google.agents.cli._agent_platform_types import types
    from google.agents.cli.eval._live import run_case_live

    turns = [
        types.evals.ConversationTurn(
            turn_index=i,
            events=[types.evals.AgentEvent(author="user", content=turn["user_content"])],
        )
        for i, turn in enumerate(case["conversation"])
    ]
    given = types.EvalCase(agent_data=types.evals.AgentData(turns=turns))
    ran, error = run_case_live(
        case=given,
        base_url=url,
        app_name="weather_voice",
        headers={},
        root_agent_name="weather_voice",
        agents_map={},
        user_id="agents-cli",
    )
    assert error is None, error
    said = []
    for turn in ran.agent_data.turns:
        agent = [e.content for e in turn.events if e.author != "user" and e.content]
        words = [p.text for c in agent for p in c.parts or [] if p.text]
        calls = [
            (p.function_call.name, p.function_call.args)
            for c in agent
            for p in c.parts or []
            if p.function_call
        ]
        said.append((words, calls))
    return said


def _said(session: dict[str, Any]) -> list[tuple[list[str], list[Any]]]:
    """Our saved live session, per turn (invocation): the agent's words and its tool calls."""
    by_turn: dict[str, list[dict[str, Any]]] = {}
    for event in session["events"]:
        by_turn.setdefault(event["invocationId"], []).append(event)
    said = []
    for events in by_turn.values():
        parts = [
            p
            for e in events
            if e["author"] != "user"
            for p in (e.get("content") or {}).get("parts", [])
        ]
        words = [p["text"] for p in parts if p.get("text")]
        calls = [
            (p["functionCall"]["name"], p["functionCall"]["args"])
            for p in parts
            if p.get("functionCall")
        ]
        said.append((words, calls))
    return said


def test_a_latency_threshold_fails_the_run_when_missed(
    voice: FakeGeminiLive, caplog: pytest.LogCaptureFixture
) -> None:
    voice.first_delay = 0.3
    args = LIVE_ONE_METRIC
    with caplog.at_level(logging.WARNING, logger="platform_eval"):
        assert _run(*args, "--threshold", "first_audio_p95_s=0.05") == 1
    # No --save-sessions: the audio heard is kept nowhere, and the run says so.
    assert any(
        re.fullmatch(r"live mode: the agent's audio of \d+ turns is not kept; .*", r.message)
        for r in caplog.records
    )
    missed = json.loads(Path("report.json").read_text())["agentUsage"]["missed"]
    # Whatever the machine's load made it: above the bound.
    assert len(missed) == 1 and re.fullmatch(r"first_audio_p95_s: [0-9.]+ > 0\.05", missed[0])
    assert _run(*args, "--threshold", "last_audio_p95_s=60") == 0
    # In run mode no turn is live: the bound cannot be checked, and never passes.
    run_mode = ["--agent", "agents/weather_voice", "--metrics", "response_match_score"]
    assert _run(*run_mode, "--threshold", "first_audio_p95_s=60") == 1
    missed = json.loads(Path("report.json").read_text())["agentUsage"]["missed"]
    assert missed == [
        "first_audio_p95_s: cannot be computed: no turn was live (--agent-mode live) or the "
        "agent sent no audio"
    ]


def test_a_spoken_turn_reaches_the_model_as_audio_and_is_scored_on_what_it_heard(
    voice: FakeGeminiLive, tmp_path: Path
) -> None:
    spoken = {
        "eval_set_id": "spoken",
        "eval_cases": [
            {
                "eval_id": "spoken",
                "conversation": [
                    _spoken("hello from a voice", "Hello! You said hello from a voice.")
                ],
            }
        ],
    }
    Path("voice.evalset.json").write_text(json.dumps(spoken))
    args = LIVE_ONE_METRIC
    assert _run(*args, "--save-sessions", "sessions") == 0
    assert [(r["metric"], r["score"]) for r in _rows()] == [("response_match_score", 1.0)]
    received = voice.sessions[-1].received
    assert any("realtimeInput" in m for m in received)
    assert not any("clientContent" in m for m in received)  # the audio alone was the turn
    user = json.loads(Path("sessions/spoken.json").read_text())["events"][0]
    assert user["author"] == "user"
    kinds = [next(iter(p)) for p in user["content"]["parts"]]
    assert kinds == ["inlineData", "text"]  # the audio sent, and what the model heard of it
    assert user["content"]["parts"][1]["text"] == "hello from a voice"


def test_a_turn_the_model_never_ends_fails_its_case_within_the_time(
    voice: FakeGeminiLive, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Long enough for a turn that is answered, on a busy machine too.
    monkeypatch.setenv("PLATFORM_EVAL_LIVE_TURN_TIMEOUT", "5")

    def hangs_on_weather(said: str, setup: dict[str, Any], answered: list[Any]) -> LiveAnswer:
        return LiveAnswer(silent=True) if "weather" in said else voice_rule(said, setup, answered)

    voice.rule = hangs_on_weather
    args = LIVE_ONE_METRIC
    assert _run(*args) == 1
    report = json.loads(Path("report.json").read_text())
    statuses = {r["evalCaseId"]: r["status"] for r in report["rows"]}
    assert statuses == {"greeting": "PASSED", "weather": "NOT_EVALUATED"}
    why = " ".join(str(r.get("explanation")) for r in report["rows"])
    assert "turn 1: the agent said nothing within 5 s" in why


class _Script(LiveStream):
    """A stream that plays events given in advance, then waits forever."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = list(events)

    async def send(self, said: Any) -> None:
        pass

    async def next(self) -> dict[str, Any] | None:
        import asyncio

        if not self.events:
            await asyncio.sleep(3600)
        return self.events.pop(0)


def _call(name: str) -> dict[str, Any]:
    return {"content": {"parts": [{"functionCall": {"name": name, "args": {}}}]}}


def _response(name: str) -> dict[str, Any]:
    return {"content": {"parts": [{"functionResponse": {"name": name, "response": {}}}]}}


def _words(text: str) -> dict[str, Any]:
    return {"outputTranscription": {"text": text, "finished": True}}


def test_a_turn_ends_at_the_turn_complete_that_is_no_tool_round_trip() -> None:
    boundary = TurnBoundary()
    feed = [
        _call("f"),
        _response("f"),
        {"turnComplete": True},
        _words("done"),
        {"turnComplete": True},
    ]
    assert [boundary.feed(e) for e in feed] == [
        "continue",
        "continue",
        "continue",
        "continue",
        "end",
    ]
    # A call still unanswered at turnComplete: the answer may still come.
    boundary = TurnBoundary()
    assert [boundary.feed(e) for e in (_call("f"), {"turnComplete": True})] == [
        "continue",
        "provisional",
    ]
    # A model that says where it is decides.
    assert (
        TurnBoundary().feed({"turnComplete": True, "interactionStatus": "IN_PROGRESS"})
        == "continue"
    )


@pytest.mark.anyio
async def test_an_unanswered_call_ends_its_turn_after_the_deferred_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from google.genai import types

    from platform_eval.agents import live

    monkeypatch.setattr(live, "DEFERRED_ANSWER_TIMEOUT", 0.05)
    conversation = LiveConversation(_Script([_call("f"), {"turnComplete": True}]), timeout=5)
    message = types.Content(role="user", parts=[types.Part(text="go")])
    events = await conversation.turn(message)
    assert len(events) == 2 and conversation.turns[0].ended_at is not None


def test_a_turn_timeout_that_is_no_number_is_said_before_any_run(
    voice: FakeGeminiLive, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PLATFORM_EVAL_LIVE_TURN_TIMEOUT", "2 minutes")
    assert _run(*LIVE_ONE_METRIC) == 2
    err = capsys.readouterr().err
    assert "PLATFORM_EVAL_LIVE_TURN_TIMEOUT must be a positive number, got '2 minutes'" in err
    assert "Traceback" not in err and not voice.sessions


def test_a_live_model_no_connection_can_trust_stops_the_run_in_one_line(
    voice: FakeGeminiLive, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Live server's certificate not trusted (no SSL_CERT_FILE): every case would meet
    it, so the run stops on it, saying so once."""
    monkeypatch.delenv("SSL_CERT_FILE")
    assert _run(*LIVE_ONE_METRIC) == 1
    err = capsys.readouterr().err
    assert "cannot be used: SSLCertVerificationError" in err
    assert "the other cases were not run" in err and "Traceback" not in err


def test_a_refused_live_handshake_is_a_model_no_call_can_use() -> None:
    from websockets.datastructures import Headers
    from websockets.exceptions import InvalidStatus
    from websockets.http11 import Response

    from platform_eval._model_errors import unusable_model

    refused = InvalidStatus(Response(403, "Forbidden", Headers()))
    busy = InvalidStatus(Response(503, "Service Unavailable", Headers()))
    assert unusable_model(refused) and not unusable_model(busy)
