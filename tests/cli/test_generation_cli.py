"""``analyze``, ``synthesize`` and ``rubrics`` against an emulator whose judge is a fake Gemini
server: the clusters of a run's failures (and no model call the second time), scenarios written
for an ADK agent, and rubrics written into a copy of an eval set."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fake_gemini import Seen, model_judges
from loss_failures import EXPECTED, failure_judge, results

from platform_eval.cli import main
from platform_eval.emulator import Emulator


def _failing_run(emulator: Emulator) -> str:
    prompts = [r["request"]["prompt"]["text"] for r in results()]
    with emulator.client("cli-loss") as client:
        items = [
            client.create_item(
                {
                    "displayName": f"case-{n}",
                    "evaluationItemType": "REQUEST",
                    "metadata": {"evalCaseId": f"case-{n}"},
                    "evaluationRequest": {
                        "prompt": {"text": prompt},
                        "candidateResponses": [{"candidate": "agent", "text": "Sure."}],
                    },
                }
            )
            for n, prompt in enumerate(prompts)
        ]
        evaluation_set = client.create_set(display_name="loss", items=items)
        run = client.create_run(evaluation_set=evaluation_set, metrics=["general_quality_v1"])
        done = client.wait_for_run(run, poll_interval=0.05, timeout=60)
    assert done.state == "SUCCEEDED"
    return str(done.name)


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_analyze_gives_three_clusters_with_counts_and_asks_no_model_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = str(tmp_path / "judge.db")
    with (
        model_judges(failure_judge, cache=cache) as (judges, fake),
        Emulator(judges=judges) as emulator,
    ):
        run = _failing_run(emulator)
        target = ["-q", "--endpoint", emulator.url, "--project", "cli-loss"]
        capsys.readouterr()
        assert main([*target, "analyze", run, "--format", "json"]) == 0
        report = json.loads(capsys.readouterr().out)
        counts = {(c["l1"], c["l2"]): c["count"] for c in report["clusters"]}
        assert counts == EXPECTED
        assert report["failing"] == 40 and report["metric"] == "general_quality_v1"
        largest = report["clusters"][0]
        assert largest["share"] == 0.5 and largest["cases"][0] == "case-0"
        clustering = [s for s in fake.seen if "FAILURES:" in s.prompt]
        assert len(clustering) == 1
        # Again, as a table: the judge's cache answers; the model is not asked.
        asked = len(fake.seen)
        assert main([*target, "analyze", run]) == 0
        table = capsys.readouterr().out
        assert len(fake.seen) == asked
        assert re.search(r"Tool Use\s+Missing tool call\s+20\s+50%", table)
        html_file = tmp_path / "loss.html"
        assert main([*target, "analyze", run, "-o", str(html_file)]) == 0
        assert "<td>Wrong language</td><td>8</td>" in html_file.read_text()
        # A metric the run has no failures of: no clusters, no call.
        assert main([*target, "analyze", run, "--metric", "exact_match"]) == 0
        assert "0 failing item(s), 0 cluster(s)" in capsys.readouterr().out


AGENT = '''
from google.adk.agents import Agent


def book_flight(city: str) -> dict:
    """Books a flight to the city."""
    return {"booked": city}


refunds = Agent(name="refunds", model="gemini-2.5-flash", description="Handles refunds.")
root_agent = Agent(
    name="travel",
    model="gemini-2.5-flash",
    instruction="You book flights.",
    tools=[book_flight],
    sub_agents=[refunds],
)
'''


def _writer(seen: Seen) -> str:
    if "questions" in seen.prompt:
        return json.dumps({"questions": ["Does the response name the city?"]})
    asked = int(re.search(r"Write (\d+) different", seen.prompt).group(1))  # type: ignore[union-attr]
    return json.dumps(
        {
            "scenarios": [
                {
                    "starting_prompt": f"Fly me somewhere {n}",
                    "conversation_plan": "Ask for Rome, then cancel.",
                    "test_case_title": f"Rome trip {n}",
                }
                for n in range(asked)
            ]
        }
    )


def test_synthesize_writes_a_dataset_or_an_eval_set_run_agent_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("google.adk")
    from platform_eval.formats import load_eval_set

    agent = tmp_path / "travel"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    monkeypatch.chdir(tmp_path)
    with model_judges(_writer) as (judges, fake), Emulator(judges=judges) as emulator:
        target = ["-q", "--endpoint", emulator.url, "--project", "cli-synth"]
        dataset = tmp_path / "synth-dataset.json"
        assert main([*target, "synthesize", "--agent", str(agent), "--count", "3",
                     "--instruction", "include a cancellation", "-o", str(dataset)]) == 0  # fmt: skip
        cases = json.loads(dataset.read_text())["eval_cases"]
        assert [c["user_scenario"]["starting_prompt"] for c in cases] == [
            "Fly me somewhere 0",
            "Fly me somewhere 1",
            "Fly me somewhere 2",
        ]
        assert cases[0]["eval_case_id"] == "001_rome_trip_0"
        told = fake.seen[0].prompt
        assert "instruction: You book flights." in told
        assert "tool book_flight: Books a flight to the city." in told
        assert "delegates to: refunds" in told and "Guidance: include a cancellation" in told
        evalset = tmp_path / "synth.evalset.json"
        assert main([*target, "synthesize", "--agent", str(agent), "--count", "2",
                     "-o", str(evalset)]) == 0  # fmt: skip
        loaded = load_eval_set(evalset)
        assert [c.conversation_scenario.starting_prompt for c in loaded.eval_cases] == [
            "Fly me somewhere 0",
            "Fly me somewhere 1",
        ]
        # An existing file is not replaced without --force.
        assert main([*target, "synthesize", "--agent", str(agent), "--count", "1",
                     "-o", str(evalset)]) == 2  # fmt: skip


def test_rubrics_are_written_into_a_copy_of_the_eval_set(tmp_path: Path) -> None:
    from platform_eval.formats import load_eval_set

    source: dict[str, Any] = {
        "eval_set_id": "weather",
        "eval_cases": [
            {
                "eval_id": "paris",
                "conversation": [
                    {
                        "invocation_id": "i1",
                        "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                        "final_response": {"role": "model", "parts": [{"text": "Sunny."}]},
                    }
                ],
            }
        ],
    }
    path = tmp_path / "weather.evalset.json"
    path.write_text(json.dumps(source))
    out = tmp_path / "weather-rubrics.evalset.json"
    with model_judges(_writer) as (judges, fake), Emulator(judges=judges) as emulator:
        target = ["-q", "--endpoint", emulator.url, "--project", "cli-rubrics"]
        assert main([*target, "rubrics", str(path), "-o", str(out)]) == 0
        assert "Weather in Paris?" in fake.seen[0].prompt
    (case,) = load_eval_set(out).eval_cases
    assert [r.rubric_content.text_property for r in case.rubrics or []] == [
        "Does the response name the city?"
    ]
    assert json.loads(path.read_text()) == source  # the original is left as it was


def test_rubrics_keep_a_cases_own_rubrics_and_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The copy holds the hand-written rubrics first, the written ones after them under ids of
    their own (one id twice would be refused, as adk eval refuses it), and the note says so."""
    from platform_eval.formats import load_eval_set, validate

    own = {
        "rubric_id": "paris-generated-1",  # the id a written rubric would take
        "rubric_content": {"text_property": "It is polite."},
    }
    source: dict[str, Any] = {
        "eval_set_id": "weather",
        "eval_cases": [
            {
                "eval_id": "paris",
                "rubrics": [own],
                "conversation": [
                    {
                        "invocation_id": "i1",
                        "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                    }
                ],
            }
        ],
    }
    path = tmp_path / "weather.evalset.json"
    path.write_text(json.dumps(source))
    out = tmp_path / "weather-rubrics.evalset.json"
    with model_judges(_writer) as (judges, _), Emulator(judges=judges) as emulator:
        target = ["--endpoint", emulator.url, "--project", "cli-rubrics"]
        assert main([*target, "rubrics", str(path), "-o", str(out)]) == 0
    said = capsys.readouterr().err
    assert "beside the 1 the cases had, kept as they were" in said
    (case,) = load_eval_set(out).eval_cases
    texts = [r.rubric_content.text_property for r in case.rubrics or []]
    assert texts == ["It is polite.", "Does the response name the city?"]
    ids = [r.rubric_id for r in case.rubrics or []]
    assert len(set(ids)) == 2 and ids[0] == "paris-generated-1"
    assert validate(out) == []
