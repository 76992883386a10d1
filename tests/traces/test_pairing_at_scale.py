"""Pairing traces with eval cases when cases share their first question, as real sets do:
never a cross product. Traces named by their case pair by id; the others are an error naming
the cases, which --mapping settles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from platform_eval import jobs
from platform_eval.cli import main
from platform_eval.emulator import Emulator
from platform_eval.formats import adk
from platform_eval.traces import Conversation, match_conversations
from platform_eval.traces.matching import AmbiguousPairingError
from platform_eval.types import AgentData

CASES = 1000
QUESTIONS = [f"question {n}?" for n in range(10)]


def _text(role: str, text: str) -> dict[str, object]:
    return {"role": role, "parts": [{"text": text}]}


def _eval_set() -> adk.EvalSet:
    cases = [
        {
            "eval_id": f"case_{index:04d}",
            "conversation": [
                {
                    "invocation_id": "t1",
                    "user_content": _text("user", QUESTIONS[index % len(QUESTIONS)]),
                    "final_response": _text("model", f"answer {index}"),
                }
            ],
        }
        for index in range(CASES)
    ]
    return adk.EvalSet.model_validate({"eval_set_id": "shared", "eval_cases": cases})


def _conversation(conversation_id: str, index: int) -> Conversation:
    data = AgentData.model_validate(
        {
            "turns": [
                {
                    "turnIndex": 0,
                    "events": [
                        {"author": "user", "content": _text("user", QUESTIONS[index % 10])},
                        {"author": "agent", "content": _text("model", f"answer {index}")},
                    ],
                }
            ]
        }
    )
    return Conversation(conversation_id, data, "test")


def test_traces_named_by_their_case_pair_one_to_one() -> None:
    eval_set = _eval_set()
    named = [_conversation(f"case_{i:04d}", i) for i in range(CASES)]
    report = match_conversations(eval_set.eval_cases, named)
    assert len(report.matches) == CASES and not report.shared_messages
    assert all(m.eval_id == m.conversation.id for m in report.matches)


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_traces_that_only_a_shared_question_could_pair_are_an_error_not_a_cross_product(
    tmp_path: Path,
) -> None:
    eval_set = _eval_set()
    anonymous = [_conversation(f"session-{i}", i) for i in range(CASES)]
    report = match_conversations(eval_set.eval_cases, anonymous)
    assert report.matches == [] and len(report.shared_messages) == CASES
    with Emulator() as emulator, emulator.client("p") as client:
        with pytest.raises(AmbiguousPairingError) as refused:
            jobs.evaluate(client, eval_set, traces=anonymous, metrics=["exact_match"])
        assert "--mapping" in str(refused.value) and "case_0000" in str(refused.value)
        assert list(client.list_items()) == []  # nothing was uploaded
        # A mapping settles it: one candidate per case.
        mapping = {f"session-{i}": f"case_{i:04d}" for i in range(CASES)}
        done = jobs.evaluate(
            client, eval_set, traces=anonymous, metrics=["exact_match"], mapping=mapping
        )
        assert len(done.results) == CASES
        scores = [r.evaluation_response.candidate_results[0].score for r in done.results]
        assert scores == [1.0] * CASES


@pytest.mark.slow  # seconds of its own: CI runs it (.ci/run)
def test_the_command_names_the_cases_and_exits_2(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "shared.evalset.json").write_text(_eval_set().model_dump_json())
    session = {
        "id": "someone",
        "appName": "app",
        "userId": "u",
        "events": [
            {"author": "user", "content": _text("user", QUESTIONS[0]), "invocationId": "i1"},
            {"author": "agent", "content": _text("model", "answer 0"), "invocationId": "i1"},
        ],
    }
    (work / "session.json").write_text(json.dumps(session))
    code = main(
        ["-q", "run", "shared.evalset.json", "--traces", "session.json", "--metrics", "exact_match"]
    )
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "could be any of the cases case_0000, case_0010" in err and "--mapping" in err
