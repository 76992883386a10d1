"""``run --agent CARD_URL`` against A2A peers that do not answer (tests/hostile_agents.py:
google-adk's ``to_a2a`` serving agents that fail or never finish, behind middleware that
refuses, drips or bloats): never PASSED, never scored on an empty answer; the gate fails with
one line that says why, and a peer that never finishes ends by the run's timeout."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("a2a")

from hostile_agents import a2a_hostile, card_dripped, card_of, rpc_answered, rpc_bloated

from platform_eval.cli import main


def _run(card: str, *extra: str) -> int:
    return main(
        ["-q", "run", "agents/travel.evalset.json", "--agent", card,
         "--metrics", "response_match_score", "--format", "json", *extra]
    )  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "wrap", "rpc_host", "said"),
    [
        ("failing", None, "127.0.0.1", "its task ended TASK_STATE_FAILED"),
        ("failing", rpc_answered(503), "127.0.0.1", "the A2A peer did not answer"),
        ("failing", None, "127.0.0.2", "must have the same origin"),
    ],
    ids=["failed-tasks", "503", "card-refused"],
)
def test_a_peer_that_does_not_answer_is_not_evaluated_and_fails_the_gate(
    agent_project: Any,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    wrap: Any,
    rpc_host: str,
    said: str,
) -> None:
    with a2a_hostile(kind, wrap, rpc_host) as card:
        code = _run(card)
    out, err = capsys.readouterr()
    assert code == 1, err
    assert "PASSED" not in out
    assert "finished none of the 4 runs" in err and said in err, err
    assert err.count("the A2A peer did not answer") == 1, err  # once, not once a case
    assert "Traceback" not in err


def test_a_task_that_never_completes_ends_by_the_runs_timeout(
    agent_project: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    with a2a_hostile("endless") as card:
        code = _run(card, "--timeout", "3")
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1
    assert "did not answer in time" in err and "(the run's timeout)" in err, err
    assert took < 60, took  # a hang's bound: --timeout 3 ends it


def test_a_card_dripped_or_too_large_is_refused_in_one_line(
    agent_project: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with a2a_hostile("failing", card_dripped(0.5)) as card:
        assert _run(card, "--timeout", "2") == 2
    err = capsys.readouterr().err
    assert "the A2A agent card" in err and "did not answer in time" in err, err
    monkeypatch.setenv("PLATFORM_EVAL_MAX_CARD_MIB", "1")
    with a2a_hostile("failing", card_of(3 * 2**20)) as card:
        assert _run(card) == 2
    err = capsys.readouterr().err
    assert "an A2A agent card is larger than its cap of 1 MiB" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_an_answer_over_its_cap_is_cut_off_while_the_a2a_sdk_reads_it(
    agent_project: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLATFORM_EVAL_MAX_A2A_ANSWER_MIB", "1")
    with a2a_hostile("failing", rpc_bloated(8 * 2**20)) as card:
        code = _run(card)
    err = capsys.readouterr().err
    assert code == 1
    assert "the A2A peer did not answer" in err and "larger than its cap of 1 MiB" in err, err
    assert "Traceback" not in err and "MemoryError" not in err
