"""``optimize``: google-adk's optimizer proposes instructions through a reflection model, every
candidate run and scored here; what it finds is accepted only when the paired comparison on the
validation cases says it improved. The agent's fake model answers right only when its
instruction holds a phrase; the fake reflection model proposes that phrase, or only rewords."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from conftest import work_offline
from fake_gemini import Seen, fake_gemini

from platform_eval.cli import main

PHRASE = "Always answer in French."
AGENT = """from google.adk.agents import Agent

root_agent = Agent(name="greeter", model="gemini-2.5-flash", instruction={instruction!r})
"""


def _system(seen: Seen) -> str:
    parts = (seen.body.get("systemInstruction") or {}).get("parts") or []
    return " ".join(p.get("text", "") for p in parts)


#: What the fake reflection model is asked: the simple engine's prompt, and GEPA's.
SIMPLE_ASKS = "You are an expert prompt engineer"
GEPA_ASKS = "I provided an assistant with the following instructions"


def _rule(proposal: str, reflections: list[str] | None = None) -> Any:
    def answer(seen: Seen) -> str:
        if SIMPLE_ASKS in seen.prompt:
            return proposal
        if GEPA_ASKS in seen.prompt:
            if reflections is not None:
                reflections.append(seen.prompt)
            return f"Here is the new instruction:\n```\n{proposal}\n```"
        return "Bonjour !" if PHRASE in _system(seen) else "Hello!"

    return answer


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work_offline(tmp_path, monkeypatch)
    (tmp_path / "greeter").mkdir()
    (tmp_path / "greeter" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "greeter" / "agent.py").write_text(AGENT.format(instruction="Greet the user."))
    cases = [
        {
            "eval_id": f"hello_{n}",
            "conversation": [
                {
                    "invocation_id": f"i{n}",
                    "user_content": {"role": "user", "parts": [{"text": f"Hi, I am guest {n}"}]},
                    "final_response": {"role": "model", "parts": [{"text": "Bonjour !"}]},
                }
            ],
        }
        for n in range(6)
    ]
    (tmp_path / "greet.evalset.json").write_text(
        json.dumps({"eval_set_id": "greet", "eval_cases": cases})
    )
    (tmp_path / "config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.5}}))
    return tmp_path


def _optimize(
    proposal: str,
    monkeypatch: pytest.MonkeyPatch,
    engine: str = "gepa",
    reflections: list[str] | None = None,
) -> tuple[int, dict[str, Any]]:
    with fake_gemini(_rule(proposal, reflections)) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        code = main(["-q", "optimize", "greet.evalset.json", "--agent", "greeter", "--config",
                     "config.json", "--budget", "2", "--engine", engine, "-o", "out"])  # fmt: skip
    return code, json.loads(Path("out/optimize.json").read_text())


@pytest.mark.slow  # agent runs of several candidates: CI runs it (.ci/run)
@pytest.mark.parametrize("engine", ["gepa", "simple"])
def test_an_instruction_that_helps_is_accepted_and_scores_as_claimed(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    improved = f"Greet the user. {PHRASE}"
    reflections: list[str] = []
    code, report = _optimize(improved, monkeypatch, engine, reflections)
    assert code == 0 and report["accepted"] is True and report["engine"] == engine
    if engine == "gepa":
        # GEPA's reflection read the cases as they ran: the user's message, the answer, the
        # metric's explanation.
        assert reflections and "Hi, I am guest" in reflections[0]
        assert "Hello!" in reflections[0] and "response_match_score" in reflections[0]
        assert Path("out/gepa-state").is_dir()  # kept: a run again goes on from it
    assert Path("out/instruction.txt").read_text().strip() == improved
    assert report["statistic"]["verdict"] == "improved" and "paired" in report["statistic"]["rule"]
    assert report["best"]["validation"]["meanScore"] == 1.0
    assert report["baseline"]["validation"]["meanScore"] == 0.0
    assert len(report["split"]["validation"]) == 2 and "seed" in report["split"]["how"]
    # Every reflection the model was asked for is counted (GEPA stops proposing once the
    # minibatch scores perfectly).
    assert report["modelCalls"]["reflection"] == (len(reflections) if engine == "gepa" else 2)
    page = Path("out/optimize.html").read_text()
    assert "accepted" in page and "Always answer in French." in page
    # The instruction written, run again with `run`, scores what optimize.json claims.
    (project / "greeter" / "agent.py").write_text(AGENT.format(instruction=improved))
    capsys.readouterr()
    with fake_gemini(_rule(improved)) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        assert main(["-q", "run", "greet.evalset.json", "--agent", "greeter", "--config",
                     "config.json", "--format", "json"]) == 0  # fmt: skip
    rows = json.loads(capsys.readouterr().out)["rows"]
    scored = {r["evalCaseId"]: r["score"] for r in rows}
    assert all(scored[case] == 1.0 for case in report["split"]["validation"])


@pytest.mark.slow
def test_a_log_gets_progress_lines_while_it_optimizes(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a terminal (a CI log): a line at intervals (here every event), how many
    instructions are scored, the agent runs made and the best mean so far."""
    monkeypatch.setenv("PLATFORM_EVAL_PROGRESS_SECONDS", "0.000001")
    with fake_gemini(_rule(f"Greet the user. {PHRASE}")) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        assert main(["optimize", "greet.evalset.json", "--agent", "greeter", "--config",
                     "config.json", "--budget", "1", "-o", "out"]) == 0  # fmt: skip
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("optimizing:")]
    assert lines, "no progress line"
    assert lines[0].startswith("optimizing: 1 instructions scored, 4 agent runs, best mean 0")
    assert lines[-1].endswith("best mean 1")  # the phrase found: every training case right


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["gepa", "simple"])
def test_rewordings_are_not_accepted_and_the_original_is_written(
    project: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    code, report = _optimize("Please greet the user warmly.", monkeypatch, engine)
    assert code == 0 and report["accepted"] is False
    assert Path("out/instruction.txt").read_text().strip() == "Greet the user."
    assert report["decision"].startswith("kept the original")
    assert report["statistic"]["rule"]


@pytest.mark.slow
def test_a_proposal_over_its_cap_is_not_run_and_not_written(
    project: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A reflection model that answers without end: its proposal (here 64 KiB, over a cap of
    4) is said, scored 0 and never run, and what is written holds none of it."""
    monkeypatch.setenv("PLATFORM_EVAL_MAX_PROPOSAL_KIB", "4")
    huge = f"Greet the user. {PHRASE} " + "x" * 65536
    code, report = _optimize(huge, monkeypatch, "simple")
    assert code == 0 and report["accepted"] is False
    assert Path("out/instruction.txt").read_text().strip() == "Greet the user."
    written = sum(f.stat().st_size for f in Path("out").rglob("*") if f.is_file())
    assert written < 65536, written
    assert any("over the cap of 4 KiB (PLATFORM_EVAL_MAX_PROPOSAL_KIB)" in r.getMessage()
               for r in caplog.records)  # fmt: skip


PIPELINE = """from google.adk.agents import Agent, SequentialAgent

greeter = Agent(name="greeter", model="gemini-2.5-flash", instruction="Greet the user.")
root_agent = SequentialAgent(name="pipeline", sub_agents=[greeter])
"""


@pytest.mark.slow
def test_a_sub_agents_instruction_is_optimized_with_target_sub_agents(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The root (a sequential agent) has no instruction of its own: its sub-agent's is the one
    GEPA changes, and instructions.json holds every optimized agent's."""
    (project / "greeter" / "agent.py").write_text(PIPELINE)
    improved = f"Greet the user. {PHRASE}"
    with fake_gemini(_rule(improved)) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        code = main(["-q", "optimize", "greet.evalset.json", "--agent", "greeter", "--config",
                     "config.json", "--budget", "2", "--target", "sub-agents", "-o", "out"])  # fmt: skip
        assert code == 0
        # The root alone has nothing to optimize: said, before any run.
        assert main(["-q", "optimize", "greet.evalset.json", "--agent", "greeter", "--config",
                     "config.json", "--target", "root", "-o", "out2"]) == 2  # fmt: skip
    report = json.loads(Path("out/optimize.json").read_text())
    assert report["accepted"] is True and report["target"] == "sub-agents"
    assert json.loads(Path("out/instructions.json").read_text()) == {"greeter": improved}
    assert not Path("out/instruction.txt").exists()
    assert "greeter" in Path("out/optimize.html").read_text()


SKILLED = """from google.adk.agents import Agent
from google.adk.skills import Frontmatter, Skill
from google.adk.tools.skill_toolset import SkillToolset

greeting = Skill(
    frontmatter=Frontmatter(name="greeting", description="How to greet a guest."),
    instructions="Greet the user.",
)
root_agent = Agent(
    name="greeter",
    model="gemini-2.5-flash",
    instruction="Load the greeting skill, then answer as it says.",
    tools=[SkillToolset(skills=[greeting])],
)
"""


def _skill_rule(proposal: str, reflections: list[str]) -> Any:
    """The agent loads its skill, then answers in French only when the skill says so."""

    def answer(seen: Seen) -> Any:
        if GEPA_ASKS in seen.prompt:
            reflections.append(seen.prompt)
            return f"Here is the new instruction:\n```\n{proposal}\n```"
        loaded = [
            part["functionResponse"]
            for content in seen.body.get("contents", [])
            for part in content.get("parts", [])
            if part.get("functionResponse", {}).get("name") == "load_skill"
        ]
        if not loaded:
            call = {"name": "load_skill", "args": {"skill_name": "greeting"}}
            return {"role": "model", "parts": [{"functionCall": call}]}
        return "Bonjour !" if PHRASE in json.dumps(loaded) else "Hello!"

    return answer


@pytest.mark.slow
def test_a_skills_instructions_are_optimized_with_target_skills(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The skill's instructions (the SKILL.md body the agent loads) are the text GEPA changes,
    reflected on with the runs that loaded it; the agent's own instruction is left as it is."""
    (project / "greeter" / "agent.py").write_text(SKILLED)
    improved = f"Greet the user. {PHRASE}"
    reflections: list[str] = []
    with fake_gemini(_skill_rule(improved, reflections)) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        code = main(["-q", "optimize", "greet.evalset.json", "--agent", "greeter", "--config",
                     "config.json", "--budget", "2", "--target", "skills", "-o", "out"])  # fmt: skip
    assert code == 0
    report = json.loads(Path("out/optimize.json").read_text())
    assert report["accepted"] is True and report["target"] == "skills"
    assert json.loads(Path("out/instructions.json").read_text()) == {
        "skill_instructions:greeting": improved
    }
    # The reflection was shown the skill's text and the runs that loaded it.
    assert reflections and "Greet the user." in reflections[0] and "load_skill" in reflections[0]


@pytest.mark.slow
def test_target_skills_without_skills_is_refused_before_any_run(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["-q", "optimize", "greet.evalset.json", "--agent", "greeter", "--config",
                 "config.json", "--target", "skills", "-o", "out"])  # fmt: skip
    assert code == 2
    assert "no agent of the tree has a SkillToolset with skills" in capsys.readouterr().err


def test_a_candidate_is_scored_with_its_final_state_as_run_scores_it() -> None:
    """optimize reads a run's session into its candidate as ``run`` does: the final state the
    session ends with reaches ``final_session_state_match``, with what no event's delta holds
    (``ticket``, written by the session's store): it scored 0 from the events' deltas alone."""
    from platform_eval.agents import CaseRun, LoadedAgent
    from platform_eval.formats import adk
    from platform_eval.jobs.optimize import _Scorer
    from platform_eval.metrics.judges import Judges

    case = adk.EvalCase.model_validate(
        {
            "eval_id": "books",
            "conversation": [
                {
                    "invocation_id": "i1",
                    "user_content": {"role": "user", "parts": [{"text": "Book it"}]},
                    "final_response": {"role": "model", "parts": [{"text": "Booked."}]},
                }
            ],
            "session_input": {"app_name": "a", "user_id": "u", "state": {"tier": "gold"}},
            "final_session_state": {"tier": "gold", "booked": True, "ticket": "T-1"},
        }
    )
    session = {
        "id": "s",
        "appName": "a",
        "userId": "u",
        "state": {"tier": "gold", "booked": True, "ticket": "T-1"},
        "events": [
            {"author": "user", "invocationId": "i1",
             "content": {"role": "user", "parts": [{"text": "Book it"}]}},
            {"author": "booker", "invocationId": "i1", "actions": {"stateDelta": {"booked": True}},
             "content": {"role": "model", "parts": [{"text": "Booked."}]}},
        ],
    }  # fmt: skip
    agent = LoadedAgent(object(), None, "booker", "booker", "f")
    scorer = _Scorer(agent, ["final_session_state_match"], Judges(), 1, 1)
    score, _ = scorer._case_score(case, CaseRun("books", 1, session=session))
    assert score == 1.0
