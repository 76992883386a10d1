"""compare --pairwise: a judge model reads both runs' answers to each case, in both orders,
against a fake Gemini server; a verdict that follows the order is a tie; answers are cached."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_gemini import FakeGemini, Seen, fake_gemini

from platform_eval.cli import main
from platform_eval.target import connect


def _run(target: Any, name: str, answers: list[str]) -> str:
    client = target.client
    items = [
        client.create_item(
            {
                "displayName": f"case_{index}",
                "evaluationItemType": "REQUEST",
                "evaluationRequest": {
                    "prompt": {"text": f"What is the weather in city {index}?"},
                    "goldenResponse": {"text": "It is sunny."},
                    "candidateResponses": [{"candidate": "agent", "text": answer}],
                },
            }
        )
        for index, answer in enumerate(answers)
    ]
    run = client.create_run(
        evaluation_set=client.create_set(display_name=name, items=items), metrics=["rouge_1"]
    )
    done = client.wait_for_run(run, poll_interval=0.05)
    assert done.name is not None
    return done.name


def prefers_sunny(seen: Seen) -> str:
    first = re.search(r"# Answer A\n(.*?)\n\n# Answer B", seen.prompt, re.S)
    second = re.search(r"# Answer B\n(.*?)\n\nWhich answer", seen.prompt, re.S)
    assert first and second, seen.prompt
    a, b = "sunny" in first.group(1), "sunny" in second.group(1)
    return ("A" if a else "B" if b else "TIE") + "\nit names the weather" if a != b else "TIE\nsame"


@pytest.fixture
def model(work: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGemini]:
    with fake_gemini(prefers_sunny) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
        yield fake


def _runs() -> tuple[str, str]:
    with connect() as target:
        before = _run(target, "before", ["I do not know."] * 10)
        after = _run(target, "after", ["It is sunny today."] * 7 + ["I do not know."] * 3)
    return before, after


@pytest.mark.slow  # seconds of its own: CI runs it (.ci/run)
def test_pairwise_wins_losses_and_ties_with_an_interval(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = _runs()
    args = ["-q", "--judge-model", "gemini-2.5-flash", "compare", before, after, "--pairwise"]
    assert main([*args, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    pair = document["pairwise"]
    assert (pair["wins"], pair["losses"], pair["ties"]) == (7, 0, 3)
    assert pair["net"] == pytest.approx(0.7) and pair["pValue"] == pytest.approx(2 * 0.5**7)
    low, high = pair["ci95"]
    assert 0 < low <= 0.7 <= high <= 1
    assert len(model.seen) == 20  # every case, in both orders
    assert document["judge"]["calls"] == 20
    # The same comparison again: every answer from the replay cache.
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "7 wins, 0 losses, 3 ties for the later run" in out
    assert "judge: 0 model calls, 20 answered from the cache" in out
    assert len(model.seen) == 20


def test_a_verdict_that_follows_the_order_is_a_tie(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    model.rule = lambda seen: "A\nthe first one"
    before, after = _runs()
    assert (
        main(
            [
                "-q",
                "--judge-model",
                "gemini-2.5-flash",
                "--no-judge-cache",
                "compare",
                before,
                after,
                "--pairwise",
                "--format",
                "json",
            ]
        )
        == 0
    )
    pair = json.loads(capsys.readouterr().out)["pairwise"]
    assert (pair["wins"], pair["losses"], pair["ties"]) == (0, 0, 10)
    assert pair["pValue"] == 1.0


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
def test_pairwise_without_a_judge_model_says_how_to_give_one(
    work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("PLATFORM_EVAL_JUDGE_MODEL", raising=False)
    before, after = _runs()
    assert main(["-q", "compare", before, after, "--pairwise"]) == 2
    assert "--pairwise asks a judge model" in capsys.readouterr().err


def test_an_unreadable_verdict_is_not_evaluated_and_the_gate_does_not_pass_on_it(
    model: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge answering garbage decided nothing: not ten ties and p 1, but ten cases NOT
    EVALUATED, and --fail-on-regression fails on them."""
    model.rule = lambda seen: "Well, it depends on what you value.\nhard to say"
    before, after = _runs()
    command = ["-q", "--judge-model", "gemini-2.5-flash", "compare", before, after, "--pairwise"]
    assert main([*command, "--format", "json"]) == 0
    pair = json.loads(capsys.readouterr().out)["pairwise"]
    assert (pair["cases"], pair["wins"], pair["losses"], pair["ties"]) == (0, 0, 0, 0)
    assert len(pair["notEvaluated"]) == 10 and pair["complete"] is False
    assert pair["net"] is None and pair["pValue"] is None
    assert main([*command, "--fail-on-regression"]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("NOT_EVALUATED: ") == 10
    assert "the judge's verdict could not be read (?, ?)" in captured.out
    assert "gate does not pass on verdicts nobody read" in captured.err
