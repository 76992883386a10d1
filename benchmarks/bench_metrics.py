"""Score N invocations with the trajectory and ROUGE metrics, in our engine and in google-adk's.

    python benchmarks/bench_metrics.py [--invocations 10000] [--rounds 5] [--trajectory-only]

Both sides score the same generated data: one eval case per 5 invocations, each invocation with
0-4 tool calls and a 5-40 word answer. Ours runs through ``metrics.evaluate_request`` (the
emulator's code path, AgentData in and CandidateResults out); ADK's through
``TrajectoryEvaluator`` (EXACT, IN_ORDER, ANY_ORDER) and ``RougeEvaluator``. The scores are
checked to agree before the times are printed.

Three layouts, timed the same way for both sides:
- *as read*: each case's inputs are built just before it is scored (not timed), ours an
  EvaluationRequest model, ADK's its Invocation models; only the scoring is timed;
- *all held*: every case's inputs are built first, then all are scored; the walk over 10,000
  invocations' objects then misses the CPU caches, which costs both sides the same time;
- *from stored JSON*: each case starts as the JSON text it is kept as, and reading it is timed
  with the scoring: ours the item's request as the emulator's store keeps it, read by the run
  executor's path (``json.loads`` and ``metrics.evaluate_stored_request``, no model built);
  ADK's the case's invocations as an eval set file holds them (its own ``model_dump_json``),
  read with ``Invocation.model_validate_json`` as ``adk eval`` reads an eval set.

In memory the two sides are not given the same thing: ADK's evaluators take invocations
already split by turn, ours an EvaluationRequest of AgentData events, which it reads into turns
first; that reading is timed on its own too, and printed as part of ours.

Warm: both sides first score the whole data once (imports done, caches filled the same way),
then ``--rounds`` timed rounds, each scoring with ours then with ADK's; the ratio is the median
of the rounds' ratios. Cold start: a fresh interpreter per side, timed
from before the metric modules' import to the first case scored. Goal (issue 11): >= 20x warm.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from platform_eval import metrics
from platform_eval import types as t
from platform_eval.formats import adk
from platform_eval.formats.convert import expected_agent_data

MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")
WORDS = [
    "the",
    "agent",
    "booked",
    "a",
    "flight",
    "to",
    "Paris",
    "for",
    "next",
    "Monday",
    "and",
    "returned",
    "on",
    "Friday",
    "with",
    "two",
    "bags",
    "weather",
    "is",
    "sunny",
    "running",
    "runs",
    "ran",
    "cancel",
    "refund",
    "order",
    "shipped",
    "tracking",
    "number",
]


def make_case(rng: random.Random, index: int, turns: int) -> adk.EvalCase:
    conversation = []
    for turn in range(turns):
        calls = [
            {
                "name": rng.choice(["search", "book", "refund", "track"]),
                "args": {"id": rng.randint(1, 3)},
            }
            for _ in range(rng.randint(0, 4))
        ]
        answer = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
        conversation.append(
            {
                "invocation_id": f"{index}-{turn}",
                "user_content": {"role": "user", "parts": [{"text": f"request {turn}"}]},
                "final_response": {"role": "model", "parts": [{"text": answer}]},
                "intermediate_data": {"tool_uses": calls},
            }
        )
    return adk.EvalCase.model_validate({"eval_id": f"case-{index}", "conversation": conversation})


def _our_specs(trajectory_only: bool = False) -> list[Any]:
    rouge = (
        []
        if trajectory_only
        else [metrics.resolve(t.EvaluationRunMetric(metric="response_match_score"))]
    )
    return [
        metrics.resolve(
            t.EvaluationRunMetric.model_validate(
                {
                    "metric": "tool_trajectory_avg_score",
                    "metricConfig": {
                        "computationBasedMetricSpec": {"parameters": {"match_type": m}}
                    },
                }
            )
        )
        for m in MATCH_TYPES
    ] + rouge


def _our_request(expected: adk.EvalCase, actual: adk.EvalCase) -> t.EvaluationRequest:
    return t.EvaluationRequest(
        prompt=t.EvaluationPrompt(text="q"),
        golden_response=t.CandidateResponse(agent_data=expected_agent_data(expected, "agent")),
        candidate_responses=[
            t.CandidateResponse(candidate="a", agent_data=expected_agent_data(actual, "agent"))
        ],
    )


def ours(
    pairs: list[tuple[adk.EvalCase, adk.EvalCase]],
    held: bool = False,
    trajectory_only: bool = False,
    stored: bool = False,
) -> tuple[float, list[float]]:
    specs = _our_specs(trajectory_only)
    if stored:

        def stored_request(expected: adk.EvalCase, actual: adk.EvalCase) -> str:
            return json.dumps(_our_request(expected, actual).to_wire())

        def from_json(text: str) -> list[float]:
            found = metrics.evaluate_stored_request(specs, json.loads(text))
            return [r.score or 0.0 for r in found]

        return _timed(pairs, stored_request, from_json, held)

    def score(request: t.EvaluationRequest) -> list[float]:
        return [r.score or 0.0 for r in metrics.evaluate_request(specs, request)]

    return _timed(pairs, _our_request, score, held)


def ours_reading(
    pairs: list[tuple[adk.EvalCase, adk.EvalCase]], held: bool = False
) -> tuple[float, list[float]]:
    """Of ours in memory: reading the golden and candidate AgentData into turns alone (what
    ADK's evaluators are spared: they are given invocations already split by turn)."""
    from platform_eval.metrics._invocations import response_invocations

    def read(request: t.EvaluationRequest) -> list[float]:
        turns = response_invocations(request.golden_response)  # type: ignore[arg-type]
        for candidate in request.candidate_responses or []:
            turns += response_invocations(candidate)
        return [float(len(turns))]

    return _timed(pairs, _our_request, read, held)


def _adk_invocations(case: adk.EvalCase) -> list[Any]:
    from google.adk.evaluation import eval_case

    return [eval_case.Invocation.model_validate(i.to_json_dict()) for i in case.conversation or []]


def adk_evaluators(trajectory_only: bool = False) -> list[Any]:
    """google-adk's TrajectoryEvaluator in the three match types, and its RougeEvaluator."""
    from google.adk.evaluation import eval_metrics, final_response_match_v1, trajectory_evaluator

    evaluators: list[Any] = [
        trajectory_evaluator.TrajectoryEvaluator(
            eval_metric=eval_metrics.EvalMetric(
                metric_name="tool_trajectory_avg_score",
                criterion=eval_metrics.ToolTrajectoryCriterion(
                    threshold=1.0, match_type=eval_metrics.ToolTrajectoryCriterion.MatchType[m]
                ),
            )
        )
        for m in MATCH_TYPES
    ]
    if not trajectory_only:
        evaluators.append(
            final_response_match_v1.RougeEvaluator(
                eval_metrics.EvalMetric(metric_name="response_match_score", threshold=0.5)
            )
        )
    return evaluators


def theirs(
    pairs: list[tuple[adk.EvalCase, adk.EvalCase]],
    held: bool = False,
    trajectory_only: bool = False,
    stored: bool = False,
) -> tuple[float, list[float]]:
    from google.adk.evaluation import eval_case

    evaluators = adk_evaluators(trajectory_only)

    def build(expected: adk.EvalCase, actual: adk.EvalCase) -> tuple[list[Any], list[Any]]:
        return _adk_invocations(expected), _adk_invocations(actual)

    def score(case: tuple[list[Any], list[Any]]) -> list[float]:
        expected, actual = case
        return [
            float(evaluator.evaluate_invocations(actual, expected).overall_score)
            for evaluator in evaluators
        ]

    if stored:

        def as_stored(expected: adk.EvalCase, actual: adk.EvalCase) -> tuple[list[str], list[str]]:
            def texts(case: adk.EvalCase) -> list[str]:
                return [
                    i.model_dump_json(by_alias=True, exclude_none=True)
                    for i in _adk_invocations(case)
                ]

            return texts(expected), texts(actual)

        read = eval_case.Invocation.model_validate_json

        def from_json(case: tuple[list[str], list[str]]) -> list[float]:
            expected, actual = case
            return score(([read(i) for i in expected], [read(i) for i in actual]))

        return _timed(pairs, as_stored, from_json, held)

    return _timed(pairs, build, score, held)


def _timed(
    pairs: list[tuple[adk.EvalCase, adk.EvalCase]],
    build: Callable[[adk.EvalCase, adk.EvalCase], Any],
    score: Callable[[Any], list[float]],
    held: bool,
) -> tuple[float, list[float]]:
    """Seconds spent scoring (building the inputs is not timed), and the scores."""
    scores: list[float] = []
    if held:
        inputs = [build(expected, actual) for expected, actual in pairs]
        started = time.perf_counter()
        for one in inputs:
            scores += score(one)
        return time.perf_counter() - started, scores
    seconds = 0.0
    for expected, actual in pairs:
        one = build(expected, actual)
        started = time.perf_counter()
        scores += score(one)
        seconds += time.perf_counter() - started
    return seconds, scores


COLD_START = """
import sys, time
sys.path.insert(0, {here!r})
started = time.perf_counter()
import bench_metrics as b
import random
pairs = [(b.make_case(random.Random(1), 0, 5), b.make_case(random.Random(2), 0, 5))]
b.{side}(pairs)
print(time.perf_counter() - started)
"""


def cold_start(side: str) -> float:
    """Seconds from a fresh interpreter's first import of the metrics to one case scored."""
    code = COLD_START.format(here=str(Path(__file__).parent), side=side)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--invocations", type=int, default=10_000)
    parser.add_argument("--turns-per-case", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trajectory-only", action="store_true")
    args = parser.parse_args()
    only = args.trajectory_only
    goal = 2.0 if only else 20.0
    rng = random.Random(7)
    cases = max(1, args.invocations // args.turns_per_case)
    pairs = [
        (make_case(rng, i, args.turns_per_case), make_case(rng, i, args.turns_per_case))
        for i in range(cases)
    ]
    invocations = cases * args.turns_per_case
    _, our_scores = ours(pairs, trajectory_only=only)
    _, adk_scores = theirs(pairs, trajectory_only=only)
    _, our_stored_scores = ours(pairs, trajectory_only=only, stored=True)
    _, adk_stored_scores = theirs(pairs, trajectory_only=only, stored=True)
    disagreements = sum(
        1
        for a, b, c, d in zip(
            our_scores, adk_scores, our_stored_scores, adk_stored_scores, strict=True
        )
        if max(a, b, c, d) - min(a, b, c, d) > 1e-9
    )
    print(
        f"{invocations} invocations in {cases} cases; trajectory (3 match types)"
        f"{'' if only else ' + ROUGE-1'}; "
        f"warm, median of {args.rounds} rounds; score disagreements: {disagreements}"
    )
    layouts = (
        ("as read", False, False),
        ("all held", True, False),
        ("from stored JSON", False, True),
    )
    for layout, held, stored in layouts:
        # Rounds alternate the two sides, and each round's ratio is taken: a slow spell of
        # the machine then weighs on one round of both, not on every round of one.
        rounds = [
            (ours(pairs, held, only, stored)[0], theirs(pairs, held, only, stored)[0])
            for _ in range(args.rounds)
        ]
        reading = (
            None
            if stored
            else statistics.median(ours_reading(pairs, held)[0] for _ in range(args.rounds))
        )
        our_seconds = statistics.median(o for o, _ in rounds)
        adk_seconds = statistics.median(a for _, a in rounds)
        print(f"{layout}:")
        for name, seconds in (("platform-eval", our_seconds), ("google-adk", adk_seconds)):
            per = seconds / invocations * 1e6
            print(
                f"  {name + ':':15}{seconds:7.3f} s ({invocations / seconds:9.0f} invocations/s, "
                f"{per:6.1f} us each)"
            )
        if reading is not None:
            print(
                f"  of ours, reading AgentData into turns: {reading / invocations * 1e6:6.1f} us "
                "each (ADK's evaluators are given turns already split)"
            )
        ratios = sorted(a / o for o, a in rounds)
        ratio = statistics.median(ratios)
        verdict = "met" if ratio >= goal else "not met"
        print(
            f"  ratio (adk time / ours), median of the rounds' ratios: {ratio:.1f}x "
            f"(rounds {', '.join(f'{r:.1f}' for r in ratios)}; goal >= {goal:g}x: {verdict})"
        )
    ours_cold, adk_cold = cold_start("ours"), cold_start("theirs")
    print(
        f"cold start (fresh interpreter: import + first case): platform-eval {ours_cold:.2f} s, "
        f"google-adk {adk_cold:.2f} s"
    )


if __name__ == "__main__":
    main()
