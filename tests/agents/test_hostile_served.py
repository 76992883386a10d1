"""``run --agent URL`` against servers that turn on us (tests/hostile_agents.py): credentials
never leave the origin they were given for, every turn ends by its deadline whatever the
server sends, every size is capped while reading, a turn the server may have processed is
never sent again into its session, and no secret reaches a message. Each case the server
did not answer is NOT_EVALUATED naming the cause, said once; the gate fails."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from hostile_agents import (
    HostileApiServer,
    dripped,
    echoes_headers,
    events,
    forever,
    hostile,
    live_audio_of,
    live_frame_of,
    one_event_of,
    processed_then_busy,
    redirects_to,
    trap,
    with_state_of,
)

from platform_eval.cli import main

TOKEN = "s3cret-bearer-value"
KEY = "k3y-value-of-the-user"
PASSWORD = "pa55-in-the-url"


def _run(url: str, *extra: str) -> int:
    return main(
        ["-q", "run", "agents/travel.evalset.json", "--agent", url,
         "--metrics", "response_match_score", "--format", "json", *extra]
    )  # fmt: skip


def _credentials(url: str) -> tuple[str, list[str]]:
    """``url`` with a password in it, and headers holding a token and a key."""
    with_password = url.replace("http://", f"http://alice:{PASSWORD}@")
    return with_password, [
        "--agent-header", f"Authorization: Bearer {TOKEN}", "--agent-header", f"X-Api-Key: {KEY}",
    ]  # fmt: skip


def _no_secret(*texts: str) -> None:
    for text in texts:
        for secret in (TOKEN, KEY, PASSWORD):
            assert secret not in text


@pytest.mark.parametrize("host", ["127.0.0.2", "127.0.0.1"], ids=["other-host", "other-port"])
@pytest.mark.parametrize("where", ["/run_sse", "/list-apps"])
def test_a_redirect_off_the_origin_takes_no_credential_there(
    agent_project: Any, capsys: pytest.CaptureFixture[str], host: str, where: str
) -> None:
    with trap(host) as caught:
        server = HostileApiServer()
        if where == "/run_sse":
            server.turn = redirects_to(f"{caught.url}/run_sse")
        else:
            server.list_apps = redirects_to(f"{caught.url}/list-apps", 302)
        with hostile(server) as url:
            given, headers = _credentials(url)
            code = _run(given, *headers)
    out, err = capsys.readouterr()
    assert code != 0
    assert caught.reached == []  # not one request, so not one credential
    assert f"redirected to {caught.url}" in err and "another origin: not followed" in err
    assert err.count("another origin") == 1, err
    _no_secret(out, err)
    assert "Traceback" not in err
    # What did reach the agent's own server: the Basic auth of the URL's password, which the
    # URL shown leaves out.
    assert any(h.get("authorization") == f"Bearer {TOKEN}" for _, h in server.seen)
    assert url in err or where == "/run_sse"


@pytest.mark.parametrize("host", ["127.0.0.2", "127.0.0.1"], ids=["other-host", "other-port"])
def test_a_live_handshake_redirected_off_the_origin_takes_no_credential_there(
    agent_project: Any, capsys: pytest.CaptureFixture[str], host: str
) -> None:
    from hostile_agents import live_redirects_to

    with trap(host) as caught:
        server = HostileApiServer(live=live_redirects_to(f"ws://{host}:{caught.port}/run_live"))
        with hostile(server) as url:
            given, headers = _credentials(url)
            code = _run(given, *headers, "--agent-mode", "live")
    out, err = capsys.readouterr()
    assert code != 0
    assert caught.reached == []
    assert any(path == "/run_live" for path, _ in server.seen)  # the handshake was made
    assert f"redirected to {caught.url}" in err and "another origin: not followed" in err, err
    _no_secret(out, err)


@pytest.mark.parametrize(
    "server",
    [
        HostileApiServer(turn=forever(0.2, b":keep-alive\n\n")),
        HostileApiServer(
            turn=forever(
                0.3,
                b'data: {"author": "travel_agent", "partial": true, '
                b'"content": {"parts": [{"text": "."}]}}\n\n',
            )
        ),
        HostileApiServer(session=dripped(0.5)),
    ],
    ids=["keep-alive", "partial-events", "dripped-session"],
)
def test_a_turn_that_never_ends_is_not_evaluated_by_the_runs_timeout(
    agent_project: Any, capsys: pytest.CaptureFixture[str], server: HostileApiServer
) -> None:
    started = time.monotonic()
    with hostile(server) as url:
        code = _run(url, "--timeout", "3")
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1
    assert "did not answer in time" in err and "(the run's timeout)" in err, err
    assert "finished none of the 4 runs" in err
    assert took < 60, took  # a hang's bound, not a measure: --timeout 3 ends it
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("server", "variable", "value"),
    [
        (HostileApiServer(turn=one_event_of(4 * 2**20)), "PLATFORM_EVAL_MAX_EVENT_MIB", "1"),
        (HostileApiServer(turn=events(2000)), "PLATFORM_EVAL_MAX_TURN_EVENTS", "100"),
        (HostileApiServer(session=with_state_of(4 * 2**20)), "PLATFORM_EVAL_MAX_SESSION_MIB", "1"),
    ],
    ids=["event", "events-per-turn", "session"],
)
def test_an_answer_over_its_cap_is_refused_while_it_is_read(
    agent_project: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    server: HostileApiServer,
    variable: str,
    value: str,
) -> None:
    monkeypatch.setenv(variable, value)
    with hostile(server) as url:
        code = _run(url)
    err = capsys.readouterr().err
    assert code == 1
    assert f"larger than its cap of {value}" in err and f"({variable})" in err, err
    assert "Traceback" not in err and "MemoryError" not in err


@pytest.mark.parametrize(
    ("server", "variable", "value"),
    [
        (HostileApiServer(live=live_frame_of(3 * 2**20)), "PLATFORM_EVAL_MAX_LIVE_FRAME_MIB", "1"),
        (HostileApiServer(live=live_audio_of(3 * 2**20)), "PLATFORM_EVAL_MAX_LIVE_AUDIO_MIB", "2"),
    ],
    ids=["live-frame", "live-audio"],
)
def test_a_live_answer_over_its_cap_is_refused_while_it_is_read(
    agent_project: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    server: HostileApiServer,
    variable: str,
    value: str,
) -> None:
    monkeypatch.setenv(variable, value)
    with hostile(server) as url:
        code = _run(url, "--agent-mode", "live")
    err = capsys.readouterr().err
    assert code == 1
    assert f"larger than its cap of {value}" in err and f"({variable})" in err, err
    assert "finished none of the 4 runs" in err
    assert "Traceback" not in err and "MemoryError" not in err


def test_a_turn_answered_busy_is_never_sent_again_into_its_session(
    agent_project: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = HostileApiServer(turn=processed_then_busy)
    with hostile(server) as url:
        code = _run(url, "--agent-concurrency", "1")
    err = capsys.readouterr().err
    assert code == 1
    sessions = [session for session, _ in server.turns]
    assert len(sessions) == len(set(sessions)) > 4  # each case tried again, each time anew
    assert "answered POST with 503" in err


def test_an_error_that_echoes_the_request_shows_no_credential(
    agent_project: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with hostile(HostileApiServer(turn=echoes_headers)) as url:
        given, headers = _credentials(url)
        code = _run(given, *headers)
    out, err = capsys.readouterr()
    assert code == 1
    assert "answered POST with 500" in err and "***" in err
    _no_secret(out, err)


def test_a_password_in_the_url_is_basic_auth_never_shown(
    agent_project: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import base64

    server = HostileApiServer()
    with hostile(server) as url:
        given = url.replace("http://", f"http://alice:{PASSWORD}@")
        _run(given)
    out, err = capsys.readouterr()
    basic = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert {h.get("authorization") for _, h in server.seen} == {basic}
    _no_secret(out, err)
    # Off this machine over http, the password is a credential in clear text: refused.
    assert _run(f"http://alice:{PASSWORD}@agents.example") == 2
    err = capsys.readouterr().err
    assert "clear text" in err
    _no_secret(err)


def test_a_header_that_could_end_early_is_refused_by_its_name(
    agent_project: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _run("http://127.0.0.1:9", "--agent-header", f"X-Api-Key: {KEY}\r\nX-Evil: 1")
    err = capsys.readouterr().err
    assert code == 2
    assert "--agent-header X-Api-Key" in err and "line break" in err
    _no_secret(err)


def test_a_served_turns_latency_is_our_clock_not_the_servers(
    agent_project: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The server stamps every event of a turn 0.0 and 1.0 s (its own clock): the report's
    latency is what each turn took here, at least the 0.3 s the server waits, never the
    server's 1 s."""
    import asyncio

    async def slow_answer(server: Any, scope: Any, body: bytes, send: Any) -> None:
        from hostile_agents import answers

        await asyncio.sleep(0.3)
        await answers(server, scope, body, send)

    with hostile(HostileApiServer(turn=slow_answer)) as url:
        _run(url)
    report = json.loads(capsys.readouterr().out)
    per_case = report["agentUsage"]["perCase"]
    turns = [t for case in per_case for t in case["turnSeconds"]]
    assert len(turns) == 5 and all(0.3 <= t != 1.0 for t in turns), per_case


def test_an_inline_part_over_its_cap_is_not_sent(
    agent_project: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64

    monkeypatch.setenv("PLATFORM_EVAL_MAX_INLINE_MIB", "1")
    photo = base64.b64encode(b"\x89PNG" + b"\0" * (2 * 2**20)).decode()
    case = {
        "eval_id": "photo",
        "conversation": [{
            "invocation_id": "t1",
            "user_content": {"role": "user", "parts": [
                {"text": "What is in it?"},
                {"inline_data": {"mime_type": "image/png", "data": photo}}]},
            "final_response": {"role": "model", "parts": [{"text": "A photo."}]},
        }],
    }  # fmt: skip
    Path("photo.evalset.json").write_text(json.dumps({"eval_set_id": "p", "eval_cases": [case]}))
    server = HostileApiServer()
    with hostile(server) as url:
        code = main(["-q", "run", "photo.evalset.json", "--agent", url,
                     "--metrics", "response_match_score"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert "an inline part of a case's message is larger than its cap of 1 MiB" in err, err
    assert server.turns == []  # nothing of it was sent
