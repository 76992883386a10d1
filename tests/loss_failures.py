"""Forty failing cases of three kinds, and a fake judge that decides their rubrics and clusters
their failures as a model reading them would: for the loss-analysis tests of every layer."""

from __future__ import annotations

import json
import re
from typing import Any

from fake_gemini import Seen

#: Three kinds of failure, by the rubric that failed, and how many cases fail each way.
KINDS = {
    "calls the refund tool": ("Tool Use", "Missing tool call", 20),
    "states the price": ("Factuality and Grounding", "Wrong amount", 12),
    "answers in French": ("Instruction Following", "Wrong language", 8),
}


def results() -> list[dict[str, Any]]:
    """40 failing cases (each one rubric failed, one passed) and 5 that pass every rubric."""
    found = []
    for rubric, (_, _, count) in KINDS.items():
        for n in range(count):
            found.append(result(f"case {rubric} {n}", failed=rubric))
    found += [result(f"good {n}", failed=None) for n in range(5)]
    return found


def result(prompt: str, failed: str | None) -> dict[str, Any]:
    verdicts = [
        {
            "evaluatedRubric": {
                "rubricId": "polite",
                "content": {"property": {"description": "is polite"}},
            },
            "verdict": True,
        }
    ]
    if failed:
        verdicts.append(
            {
                "evaluatedRubric": {
                    "rubricId": failed.replace(" ", "_"),
                    "content": {"property": {"description": failed}},
                },
                "verdict": False,
                "reasoning": f"the agent never {failed}",
            }
        )
    return {
        "request": {"prompt": {"text": prompt}},
        "candidateResults": [
            {
                "candidate": "agent",
                "metric": "general_quality_v1",
                "score": 0.5,
                "rubricVerdicts": verdicts,
            }
        ],
    }


def cluster_rule(seen: Seen) -> str:
    """Clusters each failure by its rubric's words, as a model reading them would."""
    groups: dict[str, list[dict[str, str]]] = {}
    for ident, rubric in re.findall(r"\[(F\d+)\] rubric: (.+)", seen.prompt):
        groups.setdefault(rubric.strip(), []).append({"id": ident, "rationale": f"{rubric} failed"})
    return json.dumps(
        {
            "clusters": [
                {
                    "l1_category": KINDS[rubric][0],
                    "l2_category": KINDS[rubric][1],
                    "description": f"the agent does not {rubric}",
                    "failures": members,
                }
                for rubric, members in groups.items()
            ]
        }
    )


#: (L1, L2) -> cases: the clusters the three kinds make.
EXPECTED = {(l1, l2): count for l1, l2, count in KINDS.values()}


def failure_judge(seen: Seen) -> str:
    """Decides rubrics (failing the one each case's prompt names) and clusters failures."""
    if "FAILURES:" in seen.prompt:
        return cluster_rule(seen)
    failed = next((kind for kind in KINDS if f"case {kind}" in seen.prompt), None)
    verdicts = [{"rubric_id": "polite", "rubric": "is polite", "verdict": True}]
    if failed:
        rubric_id = failed.replace(" ", "_")
        verdicts.append({"rubric_id": rubric_id, "rubric": failed, "verdict": False})
    return json.dumps({"verdicts": verdicts})
