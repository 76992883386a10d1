"""``platform-eval curate``: recorded conversations into golden eval cases that ``validate``
accepts and that score 1.0 against the same recordings on the deterministic metrics;
near-duplicates merged and counted; ``--where`` keeps the conversations a run passed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, work_offline

from platform_eval.cli import main
from platform_eval.formats import load_eval_set

pytest.importorskip("google.adk")

from adk_runs import record

SHIPPED = Path(__file__).parents[1] / "data" / "traces"
METRICS = "tool_trajectory_avg_score,response_match_score"


@pytest.fixture
def recordings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of recordings: a real ADK run's session (google-adk's Runner, a scripted
    model) and the OpenTelemetry traces of three other frameworks."""
    work_offline(tmp_path, monkeypatch)
    folder = tmp_path / "recorded"
    folder.mkdir()
    session = record(schema=2, content=True).session
    (folder / "weather.session.json").write_text(json.dumps(session))
    for name in (
        "langgraph_supervisor_a2a.otlp.json",
        "openai_agents_handoff.openinference.json",
        "openai_agents_handoff.traceloop.json",
    ):
        shutil.copy(SHIPPED / name, folder / name)
    return folder


def _scores(*args: str) -> dict[tuple[str, str], Any]:
    assert main(["-q", "run", *args, "--metrics", METRICS, "--format", "json", "-o", "r.json"]) in (
        0,
        1,
    )
    rows = json.loads(Path("r.json").read_text())["rows"]
    return {(r["evalCaseId"], r["metric"]): r["score"] for r in rows}


def _curated_scores_one(paths: list[str], output: str) -> dict[tuple[str, str], Any]:
    """Curates ``paths`` into ``output``, validates it, and scores it against ``paths``."""
    assert main(["-q", "curate", *paths, "-o", output]) == 0
    assert main(["-q", "validate", output]) == 0
    scores = _scores(output, "--traces", *paths)
    assert scores
    return scores


@pytest.mark.parametrize("output", ["good.evalset.json", "good-dataset.json"])
def test_curated_cases_validate_and_score_one_against_their_recordings(
    recordings: Path, output: str
) -> None:
    scores = _curated_scores_one([str(recordings)], output)
    assert set(scores.values()) == {1.0}, scores
    cases = {case for case, _ in scores}
    # The ADK session and three traces, two of which are one OpenAI Agents run in two
    # dialects (OpenInference and Traceloop): the same conversation, one case.
    assert len(cases) == 3
    sources = json.loads(Path(output.removesuffix(".json") + ".sources.json").read_text())
    assert set(sources) == cases
    assert sorted(s["count"] for s in sources.values()) == [1, 1, 2]
    assert all(s["sources"][0]["sessionId"] for s in sources.values())


def test_near_duplicates_are_one_case_counted(recordings: Path) -> None:
    session = json.loads((recordings / "weather.session.json").read_text())
    again = {**session, "id": "another-session"}
    (recordings / "again.session.json").write_text(json.dumps(again))
    assert main(["-q", "curate", str(recordings), "-o", "good.evalset.json"]) == 0
    eval_set = load_eval_set("good.evalset.json")
    assert len(eval_set.eval_cases) == 3
    assert "from 5 recorded conversations (2 duplicates merged)" in (eval_set.description or "")
    sources = json.loads(Path("good.evalset.sources.json").read_text())
    # Files are read in name order: again.session.json first, its case named after it.
    merged = sources["another-session"]
    assert merged["count"] == 2
    assert [s["sessionId"] for s in merged["sources"]] == ["another-session", session["id"]]


def test_where_keeps_the_conversations_a_run_passed(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-q", "curate", str(recordings), "-o", "all.evalset.json"]) == 0
    cases = [c.eval_id for c in load_eval_set("all.evalset.json").eval_cases]
    # A results file of a run in which the first case passed, the second failed, the third
    # has no threshold; the fourth is not in it.
    rows = [
        {"evalCaseId": cases[0], "metric": "m", "score": 1.0, "threshold": 0.5},
        {"evalCaseId": cases[1], "metric": "m", "score": 0.2, "threshold": 0.5},
        {"evalCaseId": cases[2], "metric": "m", "score": 0.9, "threshold": None},
    ]
    Path("results.json").write_text(json.dumps({"rows": rows}))
    assert (
        main(
            ["curate", str(recordings), "-o", "good.evalset.json", "--where", "results.json=passed"]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert [c.eval_id for c in load_eval_set("good.evalset.json").eval_cases] == [cases[0]]
    assert f"{cases[1]} not passed in results.json" in err
    assert f"{cases[2]} has no verdict in results.json" in err
    assert "not among the cases of results.json" in err
    assert (
        main(
            [
                "-q",
                "curate",
                str(recordings),
                "-o",
                "bad.evalset.json",
                "--where",
                "results.json=failed",
            ]
        )
        == 0
    )
    assert [c.eval_id for c in load_eval_set("bad.evalset.json").eval_cases] == [cases[1]]


def test_where_reads_a_run_on_the_target(recordings: Path) -> None:
    assert main(["-q", "curate", str(recordings), "-o", "all.evalset.json"]) == 0
    code = main(
        [
            "-q",
            "run",
            "all.evalset.json",
            "--traces",
            str(recordings),
            "--metrics",
            METRICS,
            "--threshold",
            "tool_trajectory_avg_score=1",
            "--format",
            "json",
            "-o",
            "r.json",
        ]
    )
    assert code == 0
    run = json.loads(Path("r.json").read_text())["run"]
    assert (
        main(
            ["-q", "curate", str(recordings), "-o", "good.evalset.json", "--where", f"{run}=passed"]
        )
        == 0
    )
    assert len(load_eval_set("good.evalset.json").eval_cases) == 3


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--where", "results.json"], "expected RESULTS=passed or RESULTS=failed"),
        (["--where", "nothing.json=passed"], ""),
    ],
)
def test_usage_problems_exit_2_in_one_line(
    recordings: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    Path("taken.evalset.json").write_text("{}")
    assert main(["curate", str(recordings), "-o", "taken.evalset.json"]) == 2
    assert "taken.evalset.json exists: --force replaces it" in capsys.readouterr().err
    if said:
        assert main(["curate", str(recordings), "-o", "x.evalset.json", *args]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err


def test_nothing_to_curate_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work_offline(tmp_path, monkeypatch)
    session = {"id": "s", "appName": "a", "userId": "u", "events": []}
    Path("empty.session.json").write_text(json.dumps(session))
    assert main(["curate", "empty.session.json", "-o", "x.evalset.json"]) == 2
    assert "no conversation to curate in empty.session.json" in capsys.readouterr().err
    assert not Path("x.evalset.json").exists()


#: Recordings with nothing to ask again: an api_server /run answer (the user's message was in
#: the request) and spans recorded without message content.
CORPUS_WITHOUT_QUESTIONS = {
    "traces/adk_api_server_run_response.json": "no user message to ask again",
    "traces/maf_console_exporter_traces.jsonl": "no message content was recorded in these spans",
}
CORPUS_RECORDINGS = [
    "adk/google__adk-samples__python__agents__personalized-shopping__tests__example_interactions"
    "__text_search_floral_dress.session.json",
    "adk/google__adk-samples__python__agents__customer-service__eval__sessions__123.session.json",
    "adk/jcarah__accelerate_context_engineering_workshop__evaluation__evaluation__results__"
    "session_cs_simple_17a89ba6_session_1dfda3d3-9dcc-4353-9427-200df0386598.json",
    *(f"traces/{p.name}" for p in sorted((CORPUS / "traces").glob("*.json*"))),
]


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_RECORDINGS)
def test_the_corpus_recordings_curate_into_cases_that_score_one(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work_offline(tmp_path, monkeypatch)
    if name in CORPUS_WITHOUT_QUESTIONS:
        assert main(["curate", str(CORPUS / name), "-o", "c.evalset.json"]) == 2
        assert CORPUS_WITHOUT_QUESTIONS[name] in capsys.readouterr().err
        return
    scores = _curated_scores_one([str(CORPUS / name)], "c.evalset.json")
    assert set(scores.values()) == {1.0}, scores


def test_an_adk_session_s_starting_state_is_its_state_less_what_the_run_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work_offline(tmp_path, monkeypatch)
    session = {
        "id": "s1",
        "appName": "travel",
        "userId": "ana",
        "state": {"user:name": "Ana", "booked": True},
        "events": [
            {
                "invocationId": "i1",
                "author": "user",
                "content": {"role": "user", "parts": [{"text": "Book it"}]},
            },
            {
                "invocationId": "i1",
                "author": "travel_agent",
                "content": {"role": "model", "parts": [{"text": "Booked."}]},
                "actions": {"stateDelta": {"booked": True}},
            },
        ],
    }
    Path("s1.session.json").write_text(json.dumps(session))
    assert main(["curate", "s1.session.json", "-o", "c.evalset.json"]) == 0
    assert "the starting state leaves out 1 keys the run set (booked)" in capsys.readouterr().err
    (case,) = load_eval_set("c.evalset.json").eval_cases
    assert case.session_input is not None
    assert (case.session_input.app_name, case.session_input.user_id) == ("travel", "ana")
    assert case.session_input.state == {"user:name": "Ana"}
    assert main(["-q", "validate", "c.evalset.json"]) == 0


def test_where_gives_no_conversation_a_verdict_that_may_be_another_ones(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``a/b`` and ``a_b`` both clean to the case id ``a_b``: the run's verdict of ``a_b`` is
    the conversation ``a_b``'s (its own id), and ``a/b`` is left out saying why, rather than
    taking that verdict as its own."""
    session = json.loads((recordings / "weather.session.json").read_text())
    (recordings / "weather.session.json").unlink()
    (recordings / "slash.session.json").write_text(json.dumps({**session, "id": "a/b"}))
    (recordings / "under.session.json").write_text(json.dumps({**session, "id": "a_b"}))
    rows = [{"evalCaseId": "a_b", "metric": "m", "score": 1.0, "threshold": 0.5}]
    Path("results.json").write_text(json.dumps({"rows": rows}))
    argv = ["curate", str(recordings), "-o", "good.evalset.json", "--where", "results.json=passed"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "a/b would be case a_b, which another conversation's id also names" in err
    sources = json.loads(Path("good.evalset.sources.json").read_text())
    assert [s["sessionId"] for c in sources.values() for s in c["sources"]] == ["a_b"]


def test_a_cleaned_case_id_is_taken_only_when_it_is_the_conversations_alone() -> None:
    from platform_eval.jobs.curate import case_of

    passed = {"a_b": True}
    assert case_of("a/b", passed, {"a/b"}) == ("a_b", None)
    assert case_of("a_b", passed, {"a/b", "a_b"}) == ("a_b", None)
    case, why = case_of("a/b", passed, {"a/b", "a_b"})
    assert case is None and why is not None and "another conversation's id" in why
    # The run holds curate's numbered name too: which of the two was a/b cannot be told.
    case, why = case_of("a/b", {"a_b": True, "a_b-2": False}, {"a/b"})
    assert case is None and why is not None and "a_b-2 is there too" in why
    assert case_of("case_1#2", {"case_1": True}) == ("case_1", None)
    assert case_of("other", passed) == (None, None)
