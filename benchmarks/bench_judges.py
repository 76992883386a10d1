"""Judged cases against a fake Gemini server that takes 200 ms a call: ours beside google-adk's.

    python benchmarks/bench_judges.py [--cases 1000] [--latency-ms 200] [--concurrency 8]
    python benchmarks/bench_judges.py --adaptive [--cases 200] [--quota 24]

Every case is one turn with a golden answer, scored by ``final_response_match_v2`` with
``num_samples`` 1: one judge call a case, the same prompt on every side (the parity test proves
the prompts equal). Three ways, in one run, against the same server:

- *ours*: the emulator's run executor with a ``Judging`` of ``--concurrency`` (no cache, so
  every call is made), timed from the run's creation to its end;
- *ADK, case by case*: google-adk's ``FinalResponseMatchV2Evaluator`` called on each case in
  turn, as a script over ADK's evaluators does;
- *ADK, LocalEvalService's default*: the same evaluator on four cases at once, the parallelism
  ``adk eval`` uses by default (``EvaluateConfig.parallelism``).

The limit the concurrency sets is cases x latency / concurrency; ours is reported against it.
Both sides are warmed first (google-adk's modules imported, a few cases judged).
Goal (issue 22): at least 5x ADK's wall time, within 1.2x of the limit.

``--adaptive`` (issue 38) compares ``--judge-concurrency auto`` with fixed concurrencies, twice:
against a model that answers 429 to calls beyond ``--quota`` at once (goal: no case failed,
under 2% of calls refused, at least 3x ADK's default of 4 at once), and against one without a
limit (goal: within 1.25x of the best fixed concurrency).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_gemini import Seen, fake_gemini

from platform_eval.emulator import Emulator
from platform_eval.judges import Judging
from platform_eval.metrics import Judges

MODEL = "gemini-2.5-flash"
CRITERION = {"threshold": 0.5, "judge_model_options": {"judge_model": MODEL, "num_samples": 1}}


def rule(seen: Seen) -> str:
    valid = "sunny" in seen.prompt.split('"Agent response":', 1)[-1]
    verdict = "valid" if valid else "invalid"
    return f'{{"reasoning": "r", "is_the_agent_response_valid": "{verdict}"}}'


def _turn(question: str, answer: str) -> dict[str, Any]:
    return {
        "turns": [
            {
                "turnIndex": 0,
                "events": [
                    {"author": "user", "content": {"role": "user", "parts": [{"text": question}]}},
                    {"author": "agent", "content": {"role": "model", "parts": [{"text": answer}]}},
                ],
            }
        ]
    }


def _case(index: int) -> tuple[str, str, str]:
    city = f"City{index}"
    answer = f"It is {'sunny' if index % 3 else 'raining'} in {city}."
    return f"Case {index}: the weather in {city}?", answer, f"It is sunny in {city}."


def ours(cases: int, concurrency: int | str) -> float:
    judging = Judging(MODEL, concurrency=concurrency)
    with Emulator(judges=Judges(model=judging)) as emulator, emulator.client("bench") as client:
        items = []
        for index in range(cases):
            question, answer, golden = _case(index)
            items.append(
                client.create_item(
                    {
                        "displayName": f"case-{index}",
                        "evaluationItemType": "REQUEST",
                        "evaluationRequest": {
                            "goldenResponse": {"agentData": _turn(question, golden)},
                            "candidateResponses": [
                                {"candidate": "agent", "agentData": _turn(question, answer)}
                            ],
                        },
                    }
                )
            )
        evaluation_set = client.create_set(display_name="bench", items=items)
        metric = {
            "metric": "final_response_match_v2",
            "computationBasedMetricSpec": {"parameters": {"criterion": CRITERION}},
        }
        started = time.perf_counter()
        run = client.create_run(evaluation_set=evaluation_set, metrics=[metric])
        done = client.wait_for_run(run, poll_interval=0.05, timeout=3600)
        elapsed = time.perf_counter() - started
        assert done.state == "SUCCEEDED", done.error
        assert judging.usage.total.calls == cases
    judging.close()
    return elapsed


def _adk_inputs(cases: int) -> list[tuple[Any, Any]]:
    from google.adk.evaluation.eval_case import Invocation
    from google.genai import types

    def content(role: str, text: str) -> Any:
        return types.Content(role=role, parts=[types.Part(text=text)])

    out = []
    for index in range(cases):
        question, answer, golden = _case(index)
        actual = Invocation(
            user_content=content("user", question), final_response=content("model", answer)
        )
        expected = Invocation(
            user_content=content("user", question), final_response=content("model", golden)
        )
        out.append((actual, expected))
    return out


async def adk(cases: int, parallelism: int) -> float:
    from google.adk.evaluation.eval_metrics import EvalMetric
    from google.adk.evaluation.final_response_match_v2 import FinalResponseMatchV2Evaluator

    inputs = _adk_inputs(cases)
    metric = EvalMetric(metric_name="final_response_match_v2", threshold=0.5, criterion=CRITERION)
    limit = asyncio.Semaphore(parallelism)

    async def one(actual: Any, expected: Any) -> None:
        async with limit:
            evaluator = FinalResponseMatchV2Evaluator(metric)
            result = await evaluator.evaluate_invocations([actual], [expected])
            assert result.overall_score is not None

    started = time.perf_counter()
    await asyncio.gather(*(one(a, e) for a, e in inputs))
    return time.perf_counter() - started


def _measured(fake: Any, run: Any) -> tuple[float | None, int, int, str]:
    """Seconds of ``run()`` (None if it failed), calls the model got, those refused 429, and
    why it failed."""
    fake.seen.clear()
    fake.refused = 0
    fake.most_in_flight = 0
    try:
        seconds: float | None = run()
        why = ""
    except (AssertionError, Exception) as exc:  # a run that failed is a row, not a crash
        seconds, why = None, f"{type(exc).__name__}: {exc}"[:80]
    return seconds, len(fake.seen), fake.refused, why


def adaptive(args: argparse.Namespace) -> None:
    fixed = (4, 8, 16, 32)
    print(
        f"{args.cases} judged cases, one judge call each, {args.latency_ms:g} ms a call; "
        f"--judge-concurrency auto (start 4, cap 32) beside fixed concurrencies"
    )
    for quota in (args.quota, None):
        with fake_gemini(rule, delay=args.latency_ms / 1000, quota=quota) as fake:
            os.environ["GOOGLE_GEMINI_BASE_URL"] = fake.url
            ours(4, 4)  # warm
            asyncio.run(adk(2, 1))
            rows: list[tuple[str, tuple[float | None, int, int, str]]] = [
                ("platform-eval, auto", _measured(fake, lambda: ours(args.cases, "auto")))
            ]
            for n in fixed:
                rows.append(
                    (f"platform-eval, fixed {n}", _measured(fake, lambda n=n: ours(args.cases, n)))
                )
            rows.append(
                (
                    "google-adk evaluators, 4 at once (adk eval's default)",
                    _measured(fake, lambda: asyncio.run(adk(args.cases, 4))),
                )
            )
        said = f"a quota of {quota} calls at once (429 beyond)" if quota else "no limit"
        print(f"\n### Model with {said}\n")
        print("| contender | wall time | calls | answered 429 | note |")
        print("|---|---:|---:|---:|---|")
        for name, (seconds, calls, refused, why) in rows:
            shown = f"{seconds:.1f} s" if seconds is not None else "failed"
            share = f"{refused} ({refused / calls:.1%})" if calls else "0"
            print(f"| {name} | {shown} | {calls} | {share} | {why} |")
        auto = rows[0][1][0]
        best = min((r[1][0] for r in rows[1:-1] if r[1][0] is not None), default=None)
        adk_s = rows[-1][1][0]
        if auto is not None and adk_s is not None and best is not None:
            print(
                f"\nauto: {adk_s / auto:.1f}x adk eval's default; {auto / best:.2f}x the best "
                "fixed concurrency's time"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=None)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--adaptive", action="store_true")
    parser.add_argument("--quota", type=int, default=24)
    args = parser.parse_args()
    import warnings

    warnings.filterwarnings("ignore", category=UserWarning)
    os.environ["GOOGLE_API_KEY"] = "bench-key"
    os.environ.pop("GOOGLE_GENAI_USE_VERTEXAI", None)
    if args.adaptive:
        args.cases = args.cases or 200
        adaptive(args)
        return
    args.cases = args.cases or 1000
    with fake_gemini(rule, delay=args.latency_ms / 1000) as fake:
        os.environ["GOOGLE_GEMINI_BASE_URL"] = fake.url
        os.environ["GOOGLE_API_KEY"] = "bench-key"
        os.environ.pop("GOOGLE_GENAI_USE_VERTEXAI", None)
        # Warm: google-adk's evaluation modules imported and the clients made on both sides,
        # so that neither timing includes a one-off import of a second or two.
        ours(args.concurrency, args.concurrency)
        asyncio.run(adk(2, 1))
        fake.most_in_flight = 0
        ours_s = ours(args.cases, args.concurrency)
        in_flight = fake.most_in_flight
        adk_one = asyncio.run(adk(args.cases, 1))
        adk_four = asyncio.run(adk(args.cases, 4))
    limit = args.cases * args.latency_ms / 1000 / args.concurrency
    print(f"{args.cases} judged cases, one judge call each, {args.latency_ms:g} ms a call")
    print()
    print("| | wall time | vs ours |")
    print("|---|---|---|")
    print(f"| platform-eval, concurrency {args.concurrency} | {ours_s:.1f} s | 1.0x |")
    print(f"| google-adk evaluators, case by case | {adk_one:.1f} s | {adk_one / ours_s:.1f}x |")
    print(
        f"| google-adk evaluators, 4 cases at once (adk eval's default) | {adk_four:.1f} s | "
        f"{adk_four / ours_s:.1f}x |"
    )
    print()
    print(
        f"The limit {args.concurrency} calls at a time sets: {limit:.1f} s; ours took "
        f"{ours_s / limit:.2f}x that, with at most {in_flight} calls in flight."
    )


if __name__ == "__main__":
    main()
