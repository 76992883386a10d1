"""Upload N generated multi-turn cases with AgentData candidates to the emulator.

Measures the bulk job (``jobs.upload_items_async``, concurrent) against the same work done one
item at a time with the sync client, and prints items per second and peak memory of each.

    python benchmarks/bench_upload.py [--cases 5000] [--turns 3] [--concurrency 8] [--latency-ms 0]

The emulator runs in a separate process, so the memory figures are the uploader's own. Each
mode runs twice: once timed, once under tracemalloc for its peak Python memory (tracing slows
it down, so the two are not mixed). ``--latency-ms`` makes the emulator wait that long before
answering each create, as a real service's round trip does.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from platform_eval import Client
from platform_eval.jobs import Manifest, upload_items_async
from platform_eval.types import EvaluationItem


def _serve(port_queue: Any, db: str) -> None:
    from platform_eval.emulator import Emulator

    emulator = Emulator(db=db)
    emulator.start()
    port_queue.put(emulator.port)
    while True:
        time.sleep(3600)


def _event(author: str, role: str, part: dict[str, Any]) -> dict[str, Any]:
    return {"author": author, "content": {"role": role, "parts": [part]}}


def make_item(index: int, turns: int) -> EvaluationItem:
    agent_turns = []
    for turn in range(turns):
        agent_turns.append(
            {
                "turnIndex": turn,
                "turnId": f"c{index}-t{turn}",
                "events": [
                    _event(
                        "user",
                        "user",
                        {"text": f"Case {index}, turn {turn}: what is the weather in city {turn}?"},
                    ),
                    _event(
                        "weather_agent",
                        "model",
                        {
                            "functionCall": {
                                "name": "get_weather",
                                "args": {"city": f"city-{turn}", "days": 3},
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
                        "weather_agent",
                        "model",
                        {"text": f"It is {20 + turn} degrees and clear in city {turn}."},
                    ),
                ],
            }
        )
    return EvaluationItem.model_validate(
        {
            "displayName": f"case-{index}",
            "evaluationItemType": "REQUEST",
            "evaluationRequest": {
                "prompt": {"text": f"Case {index}"},
                "goldenResponse": {"text": "It is 20 degrees and clear."},
                "candidateResponses": [{"candidate": "agent", "agentData": {"turns": agent_turns}}],
            },
        }
    )


def bulk(url: str, cases: int, turns: int, concurrency: int, manifest: Path, project: str) -> float:
    with Client(project, api_endpoint=url) as client:
        async_client = client.to_async()
        pending = [(f"case-{i}", lambda i=i: make_item(i, turns)) for i in range(cases)]

        async def main() -> None:
            try:
                await upload_items_async(
                    async_client,
                    pending,
                    manifest=Manifest(manifest, parent=client.parent, source="bench"),
                    total=cases,
                    set_key="bench",
                    display_name="bench",
                    concurrency=concurrency,
                )
            finally:
                await async_client.close()

        started = time.perf_counter()
        asyncio.run(main())
        return time.perf_counter() - started


def one_at_a_time(url: str, cases: int, turns: int, project: str) -> float:
    with Client(project, api_endpoint=url) as client:
        started = time.perf_counter()
        names = [client.create_item(make_item(i, turns)).name for i in range(cases)]
        client.create_set(display_name="sequential", items=names)
        return time.perf_counter() - started


def measure(work: Any) -> tuple[float, float]:
    """(seconds of an untraced run, peak MiB of a traced run)."""
    seconds = work("timed")
    tracemalloc.start()
    work("traced")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak / 2**20


def _add_latency(url: str, milliseconds: float, count: int) -> None:
    if milliseconds <= 0:
        return
    import httpx

    fault = {
        "path": "evaluationItems",
        "method": "POST",
        "kind": "delay",
        "delay": milliseconds / 1000,
        "times": count,
    }
    httpx.post(f"{url}/_emulator/faults", json=fault).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-upload-"))
    queue: Any = multiprocessing.Queue()
    server = multiprocessing.Process(
        target=_serve, args=(queue, str(workdir / "emulator.sqlite")), daemon=True
    )
    server.start()
    url = f"http://127.0.0.1:{queue.get(timeout=30)}"
    try:
        size = len(make_item(0, args.turns).model_dump_json())
        print(
            f"{args.cases} cases x {args.turns} turns (item JSON ~{size} bytes), "
            f"added latency {args.latency_ms} ms per create, emulator at {url}"
        )
        _add_latency(url, args.latency_ms, 4 * args.cases)
        bulk_s, bulk_mb = measure(
            lambda tag: bulk(
                url,
                args.cases,
                args.turns,
                args.concurrency,
                workdir / f"{tag}.jsonl",
                f"bulk-{tag}",
            )
        )
        seq_s, seq_mb = measure(
            lambda tag: one_at_a_time(url, args.cases, args.turns, f"sequential-{tag}")
        )

        def line(label: str, seconds: float, mib: float) -> str:
            rate = args.cases / seconds
            timing = f"{rate:8.1f} items/s, {seconds:6.2f} s"
            return f"{label:<24}{timing}, peak traced memory {mib:6.1f} MiB"

        print(line(f"bulk, concurrency {args.concurrency}:", bulk_s, bulk_mb))
        print(line("one at a time:", seq_s, seq_mb))
        max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"speed-up: {seq_s / bulk_s:.2f}x; process max RSS {max_rss:.0f} MiB")
    finally:
        server.terminate()
        server.join(timeout=10)


if __name__ == "__main__":
    main()
