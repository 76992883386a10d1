"""EvaluationDataset files (what agents-cli reads) are eval sets everywhere: ``validate``,
``upload`` and ``run`` read them with one reader, and an eval set and its migrated dataset
score the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from platform_eval.cli import main
from platform_eval.formats.migrate import migrate_file

CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5}}


def _scores(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[Any, Any]]:
    code = main(["-q", *argv, "--format", "json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    return code, {(r["evalCaseId"], r["metric"]): (r["score"], r["status"]) for r in rows}


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_an_eval_set_and_its_migrated_dataset_score_the_same(
    agent_project: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    report = migrate_file("agents/travel.evalset.json", tmp_path / "travel-dataset.json")
    # A dataset has no session_input: the case that needs one is reported, not silently lost.
    dropped = {case.eval_id: case.not_carried for case in report.cases}
    assert any("session_input" in what for what in dropped["who_am_i"])
    agent = ["--agent", "agents/travel_agent", "--config", "eval_config.json"]
    _, from_set = _scores(capsys, "run", "agents/travel.evalset.json", *agent)
    _, from_dataset = _scores(capsys, "run", "travel-dataset.json", *agent)
    assert len(from_set) == 4 * 2
    expressible = {key: value for key, value in from_set.items() if key[0] != "who_am_i"}
    assert {key: from_dataset[key] for key in expressible} == expressible
    # The same dataset as JSON Lines, a case a line: the same scores again.
    cases = json.loads((tmp_path / "travel-dataset.json").read_text())["eval_cases"]
    (tmp_path / "travel.jsonl").write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    _, from_lines = _scores(capsys, "run", str(tmp_path / "travel.jsonl"), *agent)
    assert from_lines == from_dataset


BAD_CASES = [
    ({"eval_case_id": "empty"}, "$.eval_cases[0]", "needs a prompt"),
    (
        {
            "eval_case_id": "ends_with_the_agent",
            "agent_data": {
                "turns": [
                    {
                        "turn_index": 0,
                        "events": [
                            {
                                "author": "user",
                                "content": {"role": "user", "parts": [{"text": "hi"}]},
                            },
                            {
                                "author": "agent",
                                "content": {"role": "model", "parts": [{"text": "hello"}]},
                            },
                        ],
                    }
                ]
            },
        },
        "$.eval_cases[0]",
        "must be the user message to answer",
    ),
]


@pytest.mark.parametrize(("case", "where", "expected"), BAD_CASES)
def test_validate_upload_and_run_refuse_a_bad_dataset_alike(
    work: Path, capsys: pytest.CaptureFixture[str], case: dict[str, Any], where: str, expected: str
) -> None:
    path = work / "bad-dataset.json"
    path.write_text(json.dumps({"eval_cases": [case]}))
    messages = []
    for command in (["validate"], ["upload"], ["run", "--metrics", "exact_match"]):
        assert main(["-q", *command, str(path)]) == 2
        captured = capsys.readouterr()
        err = captured.out + captured.err
        assert "bad-dataset.json" in err and where in err and expected in err, err
        assert "Traceback" not in err
        messages.append(err)
    assert main(["-q", "runs", "list"]) == 0
    assert capsys.readouterr().out == ""  # nothing was started


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


#: An agents-cli trace file as `eval generate` writes it: each golden case with the agent's
#: events appended (a fresh turn for a prompt case) and its final text in `responses`.
TRACE_FILE = {
    "eval_cases": [
        {
            "eval_case_id": "capital",
            "prompt": _text("user", "What is the capital of France?"),
            "reference": {"response": _text("model", "The capital of France is Paris.")},
            "agent_data": {
                "agents": {"root_agent": {"agent_id": "root_agent", "instruction": "Answer."}},
                "turns": [
                    {
                        "turn_index": 0,
                        "turn_id": "turn_0",
                        "events": [
                            {
                                "author": "root_agent",
                                "content": {
                                    "role": "model",
                                    "parts": [
                                        {
                                            "function_call": {
                                                "name": "lookup",
                                                "args": {"q": "France"},
                                            }
                                        }
                                    ],
                                },
                            },
                            {
                                "author": "root_agent",
                                "content": {
                                    "role": "user",
                                    "parts": [
                                        {
                                            "function_response": {
                                                "name": "lookup",
                                                "response": {"capital": "Paris"},
                                            }
                                        }
                                    ],
                                },
                            },
                            {
                                "author": "root_agent",
                                "content": _text("model", "The capital of France is Paris."),
                            },
                        ],
                    }
                ],
            },
            "responses": [{"response": _text("model", "The capital of France is Paris.")}],
        },
        {
            "eval_case_id": "follow_up",
            "reference": {"response": _text("model", "Berlin is the capital of Germany.")},
            "agent_data": {
                "turns": [
                    {
                        "turn_index": 0,
                        "events": [
                            {"author": "user", "content": _text("user", "Capital of Spain?")},
                            {"author": "root_agent", "content": _text("model", "Madrid.")},
                        ],
                    },
                    {
                        "turn_index": 1,
                        "events": [
                            {"author": "user", "content": _text("user", "And of Germany?")},
                            {"author": "root_agent", "content": _text("model", "It is Bonn.")},
                        ],
                    },
                ]
            },
            "responses": [{"response": _text("model", "It is Bonn.")}],
        },
    ]
}


def test_an_agents_cli_trace_file_is_graded_as_it_is(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run traces_X.json` with no --traces and no --agent: each case's answer is its
    candidate (what agents-cli's `eval grade` does); the same file works as --traces for the
    golden dataset, and in convert-traces."""
    (work / "traces_1.json").write_text(json.dumps(TRACE_FILE))
    config = {"criteria": {"response_match_score": 0.7}}
    (work / "config.json").write_text(json.dumps(config))
    code, graded = _scores(capsys, "run", "traces_1.json", "--config", "config.json")
    assert graded[("capital", "response_match_score")] == (1.0, "PASSED")
    score, status = graded[("follow_up", "response_match_score")]
    # Per turn: "Madrid." as expected, then "It is Bonn." against Berlin's answer.
    assert status == "FAILED" and 0.5 < score < 0.7
    assert code == 1
    # The golden cases alone, with the trace file as --traces: the same scores.
    golden = json.loads(json.dumps(TRACE_FILE))
    for case in golden["eval_cases"]:
        case.pop("responses")
        if "prompt" in case:
            case.pop("agent_data")
        else:
            case["agent_data"]["turns"][-1]["events"].pop()
    (work / "golden-dataset.json").write_text(json.dumps(golden))
    again = _scores(
        capsys, "run", "golden-dataset.json", "--traces", "traces_1.json", "--config", "config.json"
    )
    assert again == (code, graded)
    assert main(["-q", "convert-traces", "traces_1.json"]) == 0
    converted = capsys.readouterr().out
    assert "lookup" in converted and "It is Bonn." in converted


def test_a_rubric_id_in_a_case_and_in_one_of_its_turns_is_refused_as_adk_eval_refuses_it(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rubric = {"rubric_id": "polite", "rubric_content": {"text_property": "It is polite."}}
    eval_set = {
        "eval_set_id": "twice",
        "eval_cases": [
            {
                "eval_id": "hello",
                "rubrics": [rubric],
                "conversation": [
                    {
                        "invocation_id": "t1",
                        "user_content": _text("user", "hi"),
                        "final_response": _text("model", "hello"),
                        "rubrics": [{**rubric, "rubric_content": {"text_property": "Kind."}}],
                    }
                ],
            }
        ],
    }
    (work / "twice.evalset.json").write_text(json.dumps(eval_set))
    for command in (["validate"], ["run", "--metrics", "exact_match"]):
        assert main(["-q", *command, "twice.evalset.json"]) == 2
        captured = capsys.readouterr()
        said = captured.out + captured.err
        assert "$.eval_cases[0].conversation[0].rubrics[0].rubric_id" in said, said
        assert "'polite' is already the id of $.eval_cases[0].rubrics[0].rubric_id" in said


def test_a_continued_conversation_is_the_sessions_history_and_only_its_last_message_is_asked(
    agent_project: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Shape B ("N+1"): the earlier turns go into the session as they were said; the agent
    answers the last user message, with the history in what its model reads."""
    history = {
        "turn_index": 0,
        "turn_id": "t0",
        "events": [
            {"author": "user", "content": _text("user", "What is the weather in Oslo?")},
            {"author": "travel_agent", "content": _text("model", "Oslo is snowy today.")},
        ],
    }
    ask = {
        "turn_index": 1,
        "turn_id": "t1",
        "events": [{"author": "user", "content": _text("user", "Book 2 nights in Oslo")}],
    }
    dataset = {
        "eval_cases": [
            {
                "eval_case_id": "continue",
                "agent_data": {"turns": [history, ask]},
                "reference": {"response": _text("model", "Booked, confirmation OSL-2.")},
            }
        ]
    }
    Path("continue-dataset.json").write_text(json.dumps(dataset))
    Path("config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.1}}))
    run = ["run", "continue-dataset.json", "--agent", "agents/travel_agent"]
    code, scores = _scores(capsys, *run, "--config", "config.json")
    assert code == 0, scores
    asked = [s for s in agent_project.seen if s.body.get("tools")]
    last_messages = [
        " ".join(p.get("text", "") for p in s.body["contents"][-1].get("parts", [])) for s in asked
    ]
    # The history was not asked again: the model's first call answers the last message ...
    assert "What is the weather in Oslo?" not in last_messages
    assert last_messages[0] == "Book 2 nights in Oslo"
    # ... and reads the history before it, as the session holds it.
    first = json.dumps(asked[0].body["contents"])
    assert "What is the weather in Oslo?" in first and "Oslo is snowy today." in first
    # The golden history turn equals the candidate's: the turn scores 1, the booking its match.
    score, status = scores[("continue", "response_match_score")]
    assert status == "PASSED" and 0.5 < score <= 1.0


def test_generate_writes_a_trace_file_agents_cli_reads_and_run_grades(
    agent_project: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`generate` runs the agent on each case and merges what it did as `agents-cli eval
    generate` does; agents-cli's own trace loader reads the file, and `run` grades it."""
    pytest.importorskip("google.agents.cli.eval.cmd_grade")
    from google.agents.cli.eval.cmd_grade import _load_traces_eval_cases

    dataset = {
        "eval_cases": [
            {
                "eval_case_id": "weather",
                "prompt": _text("user", "What is the weather in Rome?"),
                "reference": {"response": _text("model", "The weather in Rome is warm and dry.")},
            },
            {
                "eval_case_id": "booking",
                "agent_data": {
                    "turns": [
                        {
                            "turn_index": 0,
                            "events": [
                                {"author": "user", "content": _text("user", "Weather in Oslo?")},
                                {"author": "travel_agent", "content": _text("model", "Snowy.")},
                            ],
                        },
                        {
                            "turn_index": 1,
                            "events": [
                                {"author": "user", "content": _text("user", "Book 1 night in Oslo")}
                            ],
                        },
                    ]
                },
            },
        ]
    }
    Path("golden-dataset.json").write_text(json.dumps(dataset))
    code = main(["-q", "generate", "golden-dataset.json", "--agent", "agents/travel_agent"])
    written = Path(capsys.readouterr().out.strip())
    assert code == 0 and written.parent == Path("artifacts/traces")
    assert written.name.startswith("traces_") and written.suffix == ".json"
    theirs, files = _load_traces_eval_cases(str(written))
    assert files == 1 and [c.eval_case_id for c in theirs] == ["weather", "booking"]
    weather, booking = theirs
    # A prompt case: a fresh turn_0 of the agent's events (the prompt stays the prompt).
    (turn,) = weather.agent_data.turns
    assert turn.turn_id == "turn_0" and all(e.author != "user" for e in turn.events)
    assert weather.responses[0].response.parts[0].text == "The weather in Rome is warm and dry."
    assert weather.agent_data.agents["travel_agent"].tools  # what the agent was given
    assert "travel" in weather.agent_data.agents["travel_agent"].instruction
    # A continued conversation: the agent's events appended to its last turn.
    assert len(booking.agent_data.turns) == 2
    assert booking.agent_data.turns[1].events[0].author == "user"
    assert booking.responses[0].response.parts[0].text.startswith("Booked, confirmation")
    # Graded as it is, as agents-cli's `eval grade` would.
    Path("config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.5}}))
    code, scores = _scores(capsys, "run", str(written), "--config", "config.json")
    assert scores[("weather", "response_match_score")] == (1.0, "PASSED")
    assert code == 0


def test_generate_reports_a_case_the_agent_failed_on_and_writes_the_others(
    agent_project: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # The first model call (the first case's, one case at a time) is refused: a 400 is never
    # retried, so the agent fails on that case at once.
    agent_project.fail_next(400)
    dataset = {
        "eval_cases": [
            {"eval_case_id": "boom", "prompt": _text("user", "Explode please")},
            {"eval_case_id": "ok", "prompt": _text("user", "What is the weather in Rome?")},
        ]
    }
    Path("d-dataset.json").write_text(json.dumps(dataset))
    agent = ["--agent", "agents/travel_agent", "--agent-concurrency", "1"]
    code = main(["generate", "d-dataset.json", *agent, "-o", "t.json"])
    captured = capsys.readouterr()
    assert code == 1
    assert "wrote 1 cases to t.json" in captured.err and "boom:" in captured.err
    assert [c["eval_case_id"] for c in json.loads(Path("t.json").read_text())["eval_cases"]] == [
        "ok"
    ]
