"""An ADK judged criterion's result says what the judge said: final_response_match_v2's
reasoning per turn, hallucinations_v1's sentences not supported with their rationale, and a
config rubric's verdict its text, not only its id. The scores stay google-adk's."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from fake_gemini import Seen, adk_judge_rule, model_judges
from paths import SAMPLE_DATA

from platform_eval import jobs
from platform_eval.emulator import Emulator
from platform_eval.results import fetch_results

CRITERIA = {
    "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"num_samples": 1}},
    "hallucinations_v1": {"threshold": 0.5},
    "rubric_based_final_response_quality_v1": {
        "threshold": 0.5,
        "rubrics": [{"rubric_id": "polite", "rubric_content": {"text_property": "It is polite."}}],
    },
}


def _turn(prompt: str) -> str:
    if "And in Oslo" in prompt:
        return "Oslo"
    return "Paris" if "Paris" in prompt else "thanks"


def _judge(seen: Seen) -> str:
    prompt = seen.prompt
    if "is_the_agent_response_valid" in prompt:
        # A quote in the reasoning: the JSON string is read as JSON.
        reasoning = f'the answer about {_turn(prompt)} says \\"what was asked\\"'
        return f'{{"reasoning": "{reasoning}", "is_the_agent_response_valid": "valid"}}'
    if "**Response Begin**" in prompt and "**Sentences Begin**" not in prompt:  # segmenter
        response = prompt.split("**Response Begin**")[-1].split("**Response End**")[0]
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", response.strip()) if s]
        return "\n".join(f"<sentence>{s}</sentence>" for s in sentences)
    if "**Sentences Begin**" in prompt:
        block = prompt.split("**Sentences Begin**")[-1].split("**Sentences End**")[0]
        return "\n".join(
            f"sentence: {sentence}\nlabel: {'unsupported' if 'rain' in sentence else 'supported'}"
            f"\nrationale: no tool said {sentence.split()[-1]}\n"
            "supporting_excerpt: null\ncontradicting_excerpt: null"
            for sentence in re.findall(r"<sentence>(.*?)</sentence>", block, re.DOTALL)
        )
    return adk_judge_rule(seen)


def test_adk_judged_results_carry_the_judges_reasons(tmp_path: Path) -> None:
    config = tmp_path / "eval_config.json"
    config.write_text(json.dumps({"criteria": CRITERIA}))
    with (
        model_judges(_judge) as (judges, _),
        Emulator(judges=judges) as emulator,
        emulator.client("p") as client,
    ):
        evaluation = jobs.evaluate(
            client,
            SAMPLE_DATA / "weather.evalset.json",
            traces=[SAMPLE_DATA / "weather_traces.otlp.json"],
            config=config,
            manifest=tmp_path / "manifest.jsonl",
            poll_interval=0.05,
        )
        results = fetch_results(client, evaluation.run)
    rows: dict[str, Any] = {row.metric: row for row in results.rows}

    match = rows["final_response_match_v2"]
    assert match.score == 1.0
    assert match.explanation.endswith(
        "per-turn scores 1, 1, 1; the judge: "
        'turn 0: the answer about Paris says "what was asked"; '
        'turn 1: the answer about Oslo says "what was asked"; '
        'turn 2: the answer about thanks says "what was asked"'
    )

    hallucinations = rows["hallucinations_v1"]
    # The candidate says "It rains in Oslo." in turn 1 only: that sentence, and why.
    assert 'turn 1: unsupported: "It rains in Oslo." (no tool said Oslo.)' in (
        hallucinations.explanation
    )
    assert "turn 0: all 1 sentences supported" in hallucinations.explanation

    rubric = rows["rubric_based_final_response_quality_v1"]
    assert rubric.verdicts and {v.rubric for v in rubric.verdicts} == {"It is polite."}
    assert {v.rubric_id for v in rubric.verdicts} == {"polite"}
    assert all(v.reasoning and "judged polite" in v.reasoning for v in rubric.verdicts)
