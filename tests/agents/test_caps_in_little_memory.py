"""Every cap of the connection policy (docs/agents.md, "Servers you do not control") at its
default, shown in a command whose address space is limited as ``prlimit --as`` limits it, to
far less than what the server sends: each answer over its cap is refused while it is read,
the cap named, with no MemoryError and no traceback; no case is scored and the gate fails
(exit 1), or, for the user's own files, exit 2. Before the caps, each of these read on
until memory ran out (issue 60's attack report)."""

from __future__ import annotations

import base64
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from hostile_agents import (
    HostileApiServer,
    a2a_hostile,
    card_of,
    events,
    hostile,
    live_audio_of,
    live_frame_of,
    one_event_of,
    rpc_bloated,
    with_state_of,
)

pytestmark = pytest.mark.slow  # a command in a process of its own for each cap

#: The address space the command is given: what it needs to start and run the sample's
#: cases (about 400 MiB, mostly libraries mapped, and four live conversations at once about
#: 700), and well under what each server sends.
LIMIT_MIB = 768
GIB = 2**30


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_MIB * 2**20, LIMIT_MIB * 2**20))


def _command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "platform_eval.cli", "-q", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        preexec_fn=_limited,
        timeout=300,
    )


def _run(agent: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return _command(
        "run", "agents/travel.evalset.json", "--agent", agent,
        "--metrics", "response_match_score", "--format", "json", *extra,
    )  # fmt: skip


@contextmanager
def _served(server: HostileApiServer) -> Iterator[str]:
    with hostile(server) as url:
        yield url


#: (a server, how the command names it, more arguments) -> the cap it meets.
SERVERS: dict[str, tuple[Callable[[], AbstractContextManager[str]], tuple[str, ...], str]] = {
    "sse-event": (
        lambda: _served(HostileApiServer(turn=one_event_of(GIB))),
        (),
        "larger than its cap of 32 MiB (PLATFORM_EVAL_MAX_EVENT_MIB)",
    ),
    "events-per-turn": (
        lambda: _served(HostileApiServer(turn=events(10**7))),
        (),
        "(PLATFORM_EVAL_MAX_TURN_EVENTS)",
    ),
    "session-state": (
        lambda: _served(HostileApiServer(session=with_state_of(GIB))),
        (),
        "larger than its cap of 64 MiB (PLATFORM_EVAL_MAX_SESSION_MIB)",
    ),
    "live-frame": (
        lambda: _served(HostileApiServer(live=live_frame_of(256 * 2**20))),
        ("--agent-mode", "live"),
        "larger than its cap of 16 MiB (PLATFORM_EVAL_MAX_LIVE_FRAME_MIB)",
    ),
    "live-audio": (
        lambda: _served(HostileApiServer(live=live_audio_of(GIB, 8 * 2**20))),
        ("--agent-mode", "live"),
        "larger than its cap of 64 MiB (PLATFORM_EVAL_MAX_LIVE_AUDIO_MIB)",
    ),
    "a2a-answer": (
        lambda: a2a_hostile("failing", rpc_bloated(GIB)),
        (),
        "larger than its cap of 32 MiB (PLATFORM_EVAL_MAX_A2A_ANSWER_MIB)",
    ),
}


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_an_answer_far_over_memory_is_refused_at_its_cap(agent_project: Any, name: str) -> None:
    serve, extra, said = SERVERS[name]
    with serve() as agent:
        done = _run(agent, *extra)
    assert done.returncode == 1, done.stderr
    assert said in done.stderr, done.stderr
    assert "finished none of the 4 runs" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert "PASSED" not in done.stdout


def test_an_agent_card_far_over_memory_is_refused_at_its_cap(agent_project: Any) -> None:
    with a2a_hostile("failing", card_of(GIB)) as card:
        done = _run(card)
    assert done.returncode == 2, done.stderr
    assert "an A2A agent card is larger than its cap of 1 MiB" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr


def test_an_inline_part_over_its_cap_is_not_sent(agent_project: Any) -> None:
    """A case whose photo is 40 MiB (the cap is 20): read, then not sent, the case NOT_EVALUATED
    with the cap named, in the same little memory."""
    photo = base64.b64encode(b"\x89PNG" + bytes(40 * 2**20)).decode()
    case = {
        "eval_id": "photo",
        "conversation": [{
            "invocation_id": "i-1",
            "user_content": {"role": "user", "parts": [
                {"text": "What is in it?"},
                {"inline_data": {"mime_type": "image/png", "data": photo}},
            ]},
            "final_response": {"role": "model", "parts": [{"text": "A picture."}]},
        }],
    }  # fmt: skip
    Path("photo.evalset.json").write_text(json.dumps({"eval_set_id": "p", "eval_cases": [case]}))
    del photo, case
    with _served(HostileApiServer()) as url:
        done = _command(
            "run", "photo.evalset.json", "--agent", url, "--metrics", "response_match_score"
        )
    assert done.returncode == 1, done.stderr
    assert "larger than its cap of 20 MiB (PLATFORM_EVAL_MAX_INLINE_MIB)" in done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr


@pytest.mark.parametrize("flag", ["--quarantine", "--prices"])
def test_a_device_given_for_a_users_file_is_refused_unread(agent_project: Any, flag: str) -> None:
    with _served(HostileApiServer()) as url:
        done = _run(url, flag, "/dev/zero")
    assert done.returncode == 2, done.stderr
    assert "is a device: platform-eval reads only regular files" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
