"""Bulk create N multi-turn agent cases on the emulator: platform-eval beside the official client.

    python benchmarks/bench_upload.py [--cases 5000] [--turns 3] [--rounds 3] [--latency-ms 0]

Every contender starts from the same wire dicts (an EvaluationItem of ~2.5 KB with an AgentData
candidate of ``--turns`` turns) and ends with the same thing on the server: every item created,
with its payload in Cloud Storage, and one evaluation set listing them.

- ``platform-eval (import)``: ``jobs.upload_items_async`` as the CLI runs it, which sends a set
  the target holds nothing of with ``evaluationSets:import``, 3.5 MB per call.
- ``platform-eval (creates x16)``: the same job with ``bulk_import`` off: 16 async workers.
- ``official, sequential``: what the official client (``vertexai.Client().evals``) offers: its
  ``create_evaluation_item`` takes a ``gcs_uri``, so each payload is written with
  google-cloud-storage, then the item created, one after the other.
- ``official, 16 threads``: the same in a pool of 16 threads, as a user would add.
- ``official, create_evaluation_run(dataset=...)``: the official SDK's own upload path as a
  user calls it (a data frame of the cases in, a run out: each case written to Cloud Storage,
  its item created, then the set, an experiment and the run), beside ``platform-eval (eval set
  file, then a run)``: the ADK eval set file uploaded, then a run created.

Each contender runs in a process of its own (so its peak RSS is its own), after its imports;
``--latency-ms`` delays every request the emulator answers by that much, for all alike.
Figures: median of ``--rounds`` rounds of items/s and client CPU seconds (user + system time of
the contender's process while it works). The emulator runs in another process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from _serve import emulator_process, in_child, official_client, peak_rss_mib
from bench_memory import make_case  # the same case, as an ADK eval set holds it

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # the official client's import
THREADS = 16
WARM_CASES = 20


def _event(author: str, role: str, part: dict[str, Any]) -> dict[str, Any]:
    return {"author": author, "content": {"role": role, "parts": [part]}}


def make_item(index: int, turns: int) -> dict[str, Any]:
    """One case as the wire has it: a REQUEST item whose candidate is a multi-turn agent run."""
    agent_turns = []
    for turn in range(turns):
        city = f"city-{turn}"
        agent_turns.append(
            {
                "turnIndex": turn,
                "turnId": f"c{index}-t{turn}",
                "events": [
                    _event(
                        "user", "user", {"text": f"Case {index}, turn {turn}: weather in {city}?"}
                    ),
                    _event(
                        "weather_agent",
                        "model",
                        {
                            "functionCall": {
                                "name": "get_weather",
                                "args": {"city": city, "days": 3},
                            }
                        },
                    ),
                    _event(
                        "weather_agent",
                        "user",
                        {
                            "functionResponse": {
                                "name": "get_weather",
                                "response": {"temp": 20 + turn, "sky": "clear"},
                            }
                        },
                    ),
                    _event(
                        "weather_agent", "model", {"text": f"It is {20 + turn} degrees in {city}."}
                    ),
                ],
            }
        )
    return {
        "displayName": f"case-{index}",
        "evaluationItemType": "REQUEST",
        "evaluationRequest": {
            "prompt": {"text": f"Case {index}"},
            "goldenResponse": {"text": "It is 20 degrees and clear."},
            "candidateResponses": [{"candidate": "agent", "agentData": {"turns": agent_turns}}],
        },
    }


# -- contenders: each returns once everything is on the server --------------------------------


def ours(url: str, project: str, cases: list[dict[str, Any]], bulk_import: bool) -> None:
    from platform_eval import Client
    from platform_eval.jobs import Manifest, upload_items_async
    from platform_eval.jobs.upload import import_destination_for
    from platform_eval.types import EvaluationItem

    workdir = Path(tempfile.mkdtemp(prefix="bench-manifest-"))
    with Client(project, api_endpoint=url) as client:
        async_client = client.to_async()
        pending = [
            (f"case-{i}", lambda case=case: EvaluationItem.model_validate(case))
            for i, case in enumerate(cases)
        ]

        async def main() -> None:
            try:
                result = await upload_items_async(
                    async_client,
                    pending,
                    manifest=Manifest(workdir / "m.jsonl", parent=client.parent, source="bench"),
                    set_id="bench",
                    display_name="bench",
                    concurrency=THREADS,
                    import_destination=import_destination_for(async_client, bulk_import),
                )
                assert result.ok and len(result.items) == len(cases), result.failures[:3]
            finally:
                await async_client.close()

        asyncio.run(main())


def _official_evals(url: str, project: str) -> Any:
    return official_client(url, project).evals


def ours_from_file(
    url: str, project: str, cases: list[dict[str, Any]], then_run: bool = False
) -> None:
    """What a user runs: the ADK eval set file read, converted and uploaded
    (``jobs.upload_eval_set``); the file is written before the clock starts. ``then_run``: a
    run is created on the set (not waited for), as the official SDK's
    ``create_evaluation_run(dataset=...)`` does in the same call."""
    from platform_eval import Client, jobs

    workdir = Path(tempfile.mkdtemp(prefix="bench-evalset-"))
    evalset = workdir / "bench.evalset.json"
    turns = len(cases[0]["evaluationRequest"]["candidateResponses"][0]["agentData"]["turns"])
    adk_cases = [make_case(index, turns) for index in range(len(cases))]
    evalset.write_text(json.dumps({"eval_set_id": "bench", "eval_cases": adk_cases}))
    _clock.started, _clock.cpu = time.perf_counter(), _cpu()
    with Client(project, api_endpoint=url) as client:
        uploaded = jobs.upload_eval_set(client, evalset, manifest=workdir / "m.jsonl")
        if then_run:
            client.create_run(evaluation_set=uploaded, metrics=["exact_match"], display_name="b")
    assert len(uploaded.evaluation_items or []) == len(cases)


def official_to_a_run(url: str, project: str, cases: list[dict[str, Any]]) -> None:
    """The official SDK's own upload path as a user calls it:
    ``create_evaluation_run(dataset=EvaluationDataset(...), dest=...)`` turns each row of the
    dataset into a request, writes it to Cloud Storage, creates its item, then the set, an
    experiment and the run (``_evals_common._create_evaluation_set_from_dataframe``).

    One change to their path: SDK 2.7.0 creates the set without the ``displayName`` the API
    requires (the discovery document says "Required"), which the emulator refuses as the
    service's documents say; a wrapper names it, and nothing else of theirs is touched."""
    os.environ["STORAGE_EMULATOR_HOST"] = url
    import pandas as pd
    from vertexai._genai import evals as official_evals
    from vertexai._genai import types as vt

    create_set = official_evals.Evals.create_evaluation_set

    def named_set(self: Any, **kwargs: Any) -> Any:
        return create_set(self, **{"display_name": "sdk-generated", **kwargs})

    official_evals.Evals.create_evaluation_set = named_set  # type: ignore[method-assign]
    evals = _official_evals(url, project)
    rows = [
        {
            "prompt": case["evaluationRequest"]["prompt"]["text"],
            "reference": case["evaluationRequest"]["goldenResponse"]["text"],
            "agent_data": case["evaluationRequest"]["candidateResponses"][0]["agentData"],
        }
        for case in cases
    ]
    dataset = vt.EvaluationDataset(eval_dataset_df=pd.DataFrame(rows))
    _clock.started, _clock.cpu = time.perf_counter(), _cpu()  # the data frame is the input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = evals.create_evaluation_run(
            dataset=dataset,
            dest=f"gs://bench-{project}/sdk",
            metrics=[vt.EvaluationRunMetric(metric="exact_match")],
            display_name="bench",
        )
    assert run.name, run


def official(
    url: str, project: str, cases: list[dict[str, Any]], threads: int, staged: bool = False
) -> None:
    """``staged``: the payloads are written to Cloud Storage before the clock starts, so only
    the items are created (the official client's best case)."""
    os.environ["STORAGE_EMULATOR_HOST"] = url
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    evals = _official_evals(url, project)
    bucket = storage.Client(project=project, credentials=AnonymousCredentials()).bucket(
        f"bench-{project}"
    )

    def write(index: int) -> None:
        blob = bucket.blob(f"requests/{index}.json")
        payload = json.dumps(cases[index]["evaluationRequest"])
        blob.upload_from_string(payload, content_type="application/json")

    def create(index: int) -> str:
        case = cases[index]
        if not staged:
            write(index)
        item = evals.create_evaluation_item(
            evaluation_item_type="REQUEST",
            gcs_uri=f"gs://{bucket.name}/requests/{index}.json",
            display_name=case["displayName"],
        )
        return str(item.name)

    if staged:
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(write, range(len(cases))))
        _clock.started = time.perf_counter()
        _clock.cpu = _cpu()
    if threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            names = list(pool.map(create, range(len(cases))))
    else:
        names = [create(i) for i in range(len(cases))]
    evals.create_evaluation_set(evaluation_items=names, display_name="bench")


CONTENDERS: dict[str, Callable[[str, str, list[dict[str, Any]]], None]] = {
    "platform-eval (eval set file)": ours_from_file,
    "platform-eval (eval set file, then a run)": lambda u, p, c: ours_from_file(
        u, p, c, then_run=True
    ),
    "official, create_evaluation_run(dataset=...)": official_to_a_run,
    "platform-eval (import)": lambda u, p, c: ours(u, p, c, bulk_import=True),
    f"platform-eval (creates x{THREADS})": lambda u, p, c: ours(u, p, c, bulk_import=False),
    "official, sequential": lambda u, p, c: official(u, p, c, threads=1),
    f"official, {THREADS} threads": lambda u, p, c: official(u, p, c, threads=THREADS),
    f"official, {THREADS} threads, payloads written beforehand": lambda u, p, c: official(
        u, p, c, threads=THREADS, staged=True
    ),
}


class _Clock:
    """When the timed work started; a contender may move it past its untimed preparation."""

    started = 0.0
    cpu = 0.0


_clock = _Clock()


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def _contender(
    name: str, url: str, project: str, cases: int, turns: int, warm: bool, out: Any
) -> None:
    data = [make_item(i, turns) for i in range(cases)]
    work = CONTENDERS[name]
    # Import everything the contender uses before the clock starts.
    if name.startswith("official"):
        import vertexai  # noqa: F401
        from google.cloud import storage  # noqa: F401
    else:
        import platform_eval.jobs  # noqa: F401
    if warm:
        # A first, small upload of the same kind in the same process: what a long-lived
        # process (a notebook, a service) pays once is not counted against each upload.
        work(url, f"{project}-warm", [make_item(i, turns) for i in range(WARM_CASES)])
    _clock.started, _clock.cpu = time.perf_counter(), _cpu()
    work(url, project, data)
    wall = time.perf_counter() - _clock.started
    cpu = _cpu() - _clock.cpu
    rss = peak_rss_mib()
    out.put((wall, cpu, rss))


def run(
    name: str, url: str, project: str, cases: int, turns: int, warm: bool
) -> tuple[float, float, float]:
    return in_child(_contender, name, url, project, cases, turns, warm)  # type: ignore[no-any-return]


def _latency(url: str, milliseconds: float) -> None:
    httpx.delete(f"{url}/_emulator/faults").raise_for_status()
    if milliseconds > 0:
        fault = {"path": "", "method": "*", "kind": "delay", "delay": milliseconds / 1000}
        httpx.post(f"{url}/_emulator/faults", json={**fault, "times": 1_000_000}).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--only", action="append", help="run only contenders starting with this")
    parser.add_argument(
        "--warm",
        action="store_true",
        help=f"each contender uploads {WARM_CASES} cases in its process before the timed upload",
    )
    args = parser.parse_args()

    size = len(json.dumps(make_item(0, args.turns)))
    print(f"## Bulk create: {args.cases} cases x {args.turns} turns")
    print()
    print(
        f"Item JSON ~{size} bytes; added latency {args.latency_ms:g} ms per request; median of "
        f"{args.rounds} rounds; each contender in its own process"
        + (f", warmed by an upload of {WARM_CASES} cases first." if args.warm else ".")
    )
    print()
    names = [n for n in CONTENDERS if not args.only or any(n.startswith(o) for o in args.only)]
    figures: dict[str, list[tuple[float, float, float]]] = {n: [] for n in names}
    with emulator_process() as url:
        _latency(url, args.latency_ms)
        for round_ in range(args.rounds):
            for index, name in enumerate(names):
                project = f"bench-r{round_}-c{index}"
                figures[name].append(run(name, url, project, args.cases, args.turns, args.warm))
    print("| contender | items/s | client CPU s | CPU ms per item | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|")
    rates = {}
    for name, rounds in figures.items():
        wall = statistics.median(r[0] for r in rounds)
        cpu = statistics.median(r[1] for r in rounds)
        rss = max(r[2] for r in rounds)
        rates[name] = args.cases / wall
        print(
            f"| {name} | {rates[name]:.0f} | {cpu:.1f} | {1000 * cpu / args.cases:.2f} "
            f"| {rss:.0f} |"
        )
    print()
    officials = {n: r for n, r in rates.items() if n.startswith("official")}
    for name, rate in rates.items():
        if name.startswith("platform-eval") and officials:
            against = ", ".join(f"{rate / r:.2f}x {n}" for n, r in officials.items())
            print(f"- {name}: {against}")
    print()


if __name__ == "__main__":
    main()
