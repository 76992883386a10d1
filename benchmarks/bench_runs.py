"""The emulator's run executor: what one stored item costs to score, and where the time goes.

    python benchmarks/bench_runs.py [--items 2000] [--rounds 3] [--profile]

Setup (not timed): an emulator on a fresh SQLite file, not serving (the executor alone, no
HTTP), N three-turn agent items, each a golden and a candidate run with a tool call per turn,
checked and stored as a create stores them, and a set of them.

Timed: ``RunExecutor.execute`` of a run of that set, with ``tool_trajectory_avg_score`` in its
three match types and ``response_match_score``: each item read from the store, scored, its
RESULT item written (with the request's copy, as the service's are), then the result set and
the summary. Median of ``--rounds`` runs; per item = the run's time / N.

Beside it, google-adk scoring the same cases the way ``adk eval`` scores inferences it holds:
its ``TrajectoryEvaluator`` (3 match types) and ``RougeEvaluator`` over Invocations read from the
cases' JSON (``Invocation.model_validate_json``). ADK stores nothing: what the executor spends
on SQLite is its own.

``--profile`` prints where one run's time goes: reading items, scoring, writing results (the
store, and building their JSON), grouped from cProfile's functions.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_metrics import MATCH_TYPES

PARENT = "projects/bench-runs/locations/us-central1"


def _turns(index: int, turns: int, answer: str) -> list[dict[str, Any]]:
    found = []
    for turn in range(turns):
        city = f"city-{(index + turn) % 7}"
        found.append(
            {
                "turnIndex": turn,
                "events": [
                    {
                        "author": "user",
                        "content": {"role": "user", "parts": [{"text": f"weather in {city}?"}]},
                    },
                    {
                        "author": "weather_agent",
                        "content": {
                            "role": "model",
                            "parts": [
                                {"functionCall": {"name": "get_weather", "args": {"city": city}}}
                            ],
                        },
                    },
                    {
                        "author": "weather_agent",
                        "content": {
                            "role": "user",
                            "parts": [
                                {
                                    "functionResponse": {
                                        "name": "get_weather",
                                        "response": {"temp": 20 + turn, "sky": "clear"},
                                    }
                                }
                            ],
                        },
                    },
                    {
                        "author": "weather_agent",
                        "content": {
                            "role": "model",
                            "parts": [{"text": f"It is {answer} in {city}, {20 + turn} degrees."}],
                        },
                    },
                ],
            }
        )
    return found


def make_request(index: int, turns: int = 3) -> dict[str, Any]:
    """One case as the store keeps its request: a golden and a candidate agent run."""
    return {
        "prompt": {"text": f"case {index}"},
        "goldenResponse": {"agentData": {"turns": _turns(index, turns, "sunny")}},
        "candidateResponses": [
            {"candidate": "agent", "agentData": {"turns": _turns(index, turns, "clear")}}
        ],
    }


def _metrics() -> list[dict[str, Any]]:
    return [
        {
            "metric": "tool_trajectory_avg_score",
            "metricConfig": {"computationBasedMetricSpec": {"parameters": {"match_type": kind}}},
        }
        for kind in MATCH_TYPES
    ] + [{"metric": "response_match_score"}]


def _emulator(items: int) -> tuple[Any, str]:
    """An emulator not serving, holding ``items`` stored items and a set of them."""
    from platform_eval.emulator import Emulator

    folder = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    emulator = Emulator(db=str(folder / "emulator.sqlite"))
    backend = emulator.backend
    names = [
        backend.create(
            PARENT,
            "evaluationItems",
            {
                "displayName": f"case-{i}",
                "evaluationItemType": "REQUEST",
                "evaluationRequest": make_request(i),
            },
        )["name"]
        for i in range(items)
    ]
    evaluation_set = backend.create(
        PARENT, "evaluationSets", {"displayName": "bench", "evaluationItems": names}
    )
    return emulator, evaluation_set["name"]


def _run(emulator: Any, evaluation_set: str, profile: cProfile.Profile | None = None) -> float:
    run = emulator.backend.create(
        PARENT,
        "evaluationRuns",
        {
            "displayName": "bench",
            "dataSource": {"evaluationSet": evaluation_set},
            "evaluationConfig": {"metrics": _metrics()},
        },
    )
    started = time.perf_counter()
    if profile is not None:
        profile.enable()
    emulator.executor.execute(run["name"])
    if profile is not None:
        profile.disable()
    seconds = time.perf_counter() - started
    state = emulator.backend.get_by_name(run["name"], "evaluationRuns")["state"]
    if state != "SUCCEEDED":
        raise SystemExit(f"the run ended {state}")
    return seconds


def adk(requests: list[dict[str, Any]]) -> float:
    """Seconds for google-adk to read and score the same cases from their invocations' JSON."""
    from bench_metrics import adk_evaluators
    from google.adk.evaluation import eval_case

    from platform_eval import types as t
    from platform_eval.metrics.adk_judged import invocations

    evaluators = adk_evaluators()

    def as_json(response: dict[str, Any]) -> list[str]:
        data = t.AgentData.from_wire(response["agentData"])
        return [i.model_dump_json(by_alias=True, exclude_none=True) for i in invocations(data)]

    cases = [(as_json(r["goldenResponse"]), as_json(r["candidateResponses"][0])) for r in requests]
    read = eval_case.Invocation.model_validate_json
    started = time.perf_counter()
    for expected, actual in cases:
        golden, made = [read(i) for i in expected], [read(i) for i in actual]
        for evaluator in evaluators:
            evaluator.evaluate_invocations(made, golden)
    return time.perf_counter() - started


#: cProfile's functions grouped by what they are for: the first group whose word is in the
#: function's file and name gets its time (its own time, not its callees').
GROUPS = (
    ("score (metrics, turns walk)", ("platform_eval/metrics/",)),
    ("store (SQLite, JSON text)", ("emulator/store.py", "sqlite3", "json/", "_json")),
    ("models (pydantic: results' JSON)", ("pydantic", "platform_eval/types/")),
)


def _profile(emulator: Any, evaluation_set: str, items: int) -> None:
    profile = cProfile.Profile()
    seconds = _run(emulator, evaluation_set, profile)
    stats = pstats.Stats(profile)
    totals: dict[str, float] = {name: 0.0 for name, _ in GROUPS}
    other = 0.0
    raw: Any = stats.stats  # type: ignore[attr-defined]
    for (path, _line, function), (_cc, _nc, own, _cum, _callers) in raw.items():
        where = f"{path}:{function}"
        for name, words in GROUPS:
            if any(word in where for word in words):
                totals[name] += own
                break
        else:
            other += own
    whole = sum(totals.values()) + other
    print(
        f"\nwhere a run's time goes (cProfile, {items} items, {seconds:.2f} s under the profiler):"
    )
    for name, own in [*totals.items(), ("other (the executor's loop, threads)", other)]:
        print(f"  {name:40} {own / whole:6.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    emulator, evaluation_set = _emulator(args.items)
    requests = [make_request(i) for i in range(args.items)]
    _run(emulator, evaluation_set)  # warm: imports, metric resolution, SQLite's pages
    adk(requests[:50])
    rounds = [(_run(emulator, evaluation_set), adk(requests)) for _ in range(args.rounds)]
    ours = statistics.median(o for o, _ in rounds)
    theirs = statistics.median(a for _, a in rounds)
    print(
        f"{args.items} three-turn agent items; trajectory (3 match types) + response_match_score;"
        f" median of {args.rounds} rounds"
    )
    print("| contender | seconds | per item |")
    print("|---|---:|---:|")
    print(
        f"| platform-eval run executor (read, score, write each RESULT item) | {ours:.2f} | "
        f"{ours / args.items * 1e3:.2f} ms |"
    )
    print(
        f"| google-adk evaluators (read the JSON, score; no store) | {theirs:.2f} | "
        f"{theirs / args.items * 1e3:.2f} ms |"
    )
    if args.profile:
        _profile(emulator, evaluation_set, args.items)


if __name__ == "__main__":
    main()
