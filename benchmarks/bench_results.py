"""Pull a finished run's N RESULT items from the emulator: platform-eval beside the official client.

    python benchmarks/bench_results.py [--items 20000] [--rounds 3] [--gets 2000]

Setup (not timed): N three-turn agent cases are imported, a run scores them with
``exact_match`` and ``tool_trajectory_avg_score`` in the emulator, which writes N RESULT items
(each carries its request, as the service's do).

Contenders, each in a process of its own after its imports, median of ``--rounds`` rounds:

- ``platform-eval, iter_results``: ``Client.iter_results`` (pages of 250 listed by run, the
  next page requested while this one is read, items built from its JSON a few at a time), each
  item dropped once counted: flat memory.
- ``platform-eval, get_results``: ``Client.get_results``, every item held in a list.
- ``official, get_evaluation_run``: ``get_evaluation_run(name, include_evaluation_items=True)``
  of ``vertexai.Client().evals`` (one GET per item, in order); with ``--official-aio`` its
  async twin too, which gathers every GET at once (a connection per item: at 20,000 items the
  emulator runs out of file descriptors, so it is off by default).
- ``raw httpx``: the same listing with httpx and ``json.loads``, no models: the wire's floor.

Peak RSS is the contender's growth over its resident memory after imports (the peak is reset
there: the imports' own peak would hide a pull's), beside the bytes of JSON the listing
carries; the raw contender lists pages of 1,000. A second table times ``get_item`` of one agent
item: ours, the official client's ``get_evaluation_item`` and a raw httpx GET with
``json.loads`` (goal: <= 1.3x raw), the three in one process taking turns read by read.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import httpx
from _serve import emulator_process, in_child, official_client, peak_rss_mib, reset_peak_rss
from bench_upload import make_item

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # the official client's import
PROJECT = "bench-results"


def _official(url: str) -> Any:
    return official_client(url, PROJECT)


# -- pull contenders: each returns (items read, JSON bytes or 0) --------------------------------


def ours_iter(url: str, run: str) -> tuple[int, int]:
    from platform_eval import Client

    with Client(PROJECT, api_endpoint=url) as client:
        return sum(1 for _ in client.iter_results(run)), 0


def ours_list(url: str, run: str) -> tuple[int, int]:
    from platform_eval import Client

    with Client(PROJECT, api_endpoint=url) as client:
        return len(client.get_results(run)), 0


def official_sync(url: str, run: str) -> tuple[int, int]:
    result = _official(url).evals.get_evaluation_run(name=run, include_evaluation_items=True)
    return len(result.evaluation_item_results.eval_case_results), 0


def official_async(url: str, run: str) -> tuple[int, int]:
    evals = _official(url).aio.evals

    async def main() -> int:
        got = await evals.get_evaluation_run(name=run, include_evaluation_items=True)
        return len(got.evaluation_item_results.eval_case_results)

    return asyncio.run(main()), 0


def raw(url: str, run: str) -> tuple[int, int]:
    import json

    parent = f"{url}/v1beta1/projects/{PROJECT}/locations/us-central1"
    params = {"filter": f'evaluation_run = "{run}"', "pageSize": "1000"}
    count = size = 0
    with httpx.Client(timeout=120) as http:
        while True:
            response = http.get(f"{parent}/evaluationItems", params=params)
            response.raise_for_status()
            size += len(response.content)
            page = json.loads(response.content)
            count += len(page.get("evaluationItems", []))
            if not page.get("nextPageToken"):
                return count, size
            params["pageToken"] = page["nextPageToken"]


PULLS: dict[str, Callable[[str, str], tuple[int, int]]] = {
    "platform-eval, iter_results": ours_iter,
    "platform-eval, get_results": ours_list,
    "official, get_evaluation_run": official_sync,
    "official aio, get_evaluation_run": official_async,
    "raw httpx listing + json.loads": raw,
}


# -- get_item contenders: each a function that reads the item once ------------------------------


def get_ours(url: str, name: str) -> Callable[[], object]:
    from platform_eval import Client

    client = Client(PROJECT, api_endpoint=url)
    return lambda: client.get_item(name)


def get_official(url: str, name: str) -> Callable[[], object]:
    evals = _official(url).evals
    return lambda: evals.get_evaluation_item(name=name)


def get_raw(url: str, name: str) -> Callable[[], object]:
    import json

    http = httpx.Client(timeout=60)

    def read() -> object:
        response = http.get(f"{url}/v1beta1/{name}")
        response.raise_for_status()
        return json.loads(response.content)

    return read


GETS: dict[str, Callable[[str, str], Callable[[], object]]] = {
    "platform-eval, get_item": get_ours,
    "official, get_evaluation_item": get_official,
    "raw httpx GET + json.loads": get_raw,
}


def _imports(name: str) -> None:
    if name.startswith("official"):
        import vertexai  # noqa: F401
    elif name.startswith("platform-eval"):
        import platform_eval.client  # noqa: F401


def _pull(name: str, url: str, run: str, out: Any) -> None:
    _imports(name)
    baseline = reset_peak_rss()
    started, cpu = time.perf_counter(), sum(os.times()[:2])
    count, size = PULLS[name](url, run)
    out.put(
        (
            time.perf_counter() - started,
            sum(os.times()[:2]) - cpu,
            peak_rss_mib() - baseline,
            count,
            size,
        )
    )


def _gets(url: str, item: str, times: int, out: Any) -> None:
    """Seconds per read of each contender. The contenders share one process and take turns,
    read by read in a shuffled order, so that a drift in the machine's speed (this VM's varies
    by up to 1.7x within minutes) falls on all of them alike."""
    readers = {name: make(url, item) for name, make in GETS.items()}
    order = list(readers.items())
    for _ in range(50):  # connections, caches
        for _, read in order:
            read()
    spent = dict.fromkeys(readers, 0.0)
    shuffle = random.Random(0).shuffle
    for _ in range(times):
        shuffle(order)
        for name, read in order:
            started = time.perf_counter()
            read()
            spent[name] += time.perf_counter() - started
    out.put({name: seconds / times for name, seconds in spent.items()})


def _setup(url: str, items: int) -> tuple[str, str]:
    """A finished run of ``items`` results; returns its name and one request item's."""
    from platform_eval import Client

    cases = [make_item(i, 3) for i in range(items)]
    with Client(PROJECT, api_endpoint=url) as client:
        names: list[str] = []
        # Imported 5,000 at a time: one staged JSONL object stays under the emulator's body limit.
        for start in range(0, items, 5_000):
            part = client.import_set(
                items=cases[start : start + 5_000],
                display_name=f"bench-{start}",
                gcs_destination=f"gs://{PROJECT}-bench/imports/",
                staging_uri=f"gs://{PROJECT}-bench/staging/items-{start}.jsonl",
                wait=True,
            ).result()
            names.extend(part.evaluation_items or [])
        imported = client.create_set(display_name="bench", items=names)
        run = client.create_run(
            evaluation_set=imported,
            metrics=["exact_match", "tool_trajectory_avg_score"],
            display_name="bench",
        )
        run = client.wait_for_run(run, timeout=3600, poll_interval=0.5)
        # An item with its payload inline, as get_item's comparison needs (no GCS read).
        inline = client.create_item(cases[0])
        return run.name or "", inline.name or ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--gets", type=int, default=2_000)
    parser.add_argument("--skip-official-sync", action="store_true")
    parser.add_argument(
        "--official-aio",
        action="store_true",
        help="also the official async client, which opens a connection per item at once: at "
        "20,000 items it runs the server out of file descriptors",
    )
    args = parser.parse_args()
    skipped = {"official, get_evaluation_run"} if args.skip_official_sync else set()
    if not args.official_aio:
        skipped.add("official aio, get_evaluation_run")
    names = [n for n in PULLS if n not in skipped]
    with emulator_process() as url:
        run, item = _setup(url, args.items)
        pulls: dict[str, list[tuple[float, float, float, int, int]]] = {n: [] for n in names}
        gets: dict[str, list[float]] = {n: [] for n in GETS}
        for _ in range(args.rounds):
            for name in names:
                pulls[name].append(in_child(_pull, name, url, run))
            for name, seconds in in_child(_gets, url, item, args.gets).items():
                gets[name].append(seconds)
    json_mib = max(r[4] for r in pulls["raw httpx listing + json.loads"]) / 2**20
    print(f"## Pull {args.items} RESULT items of a finished run")
    print()
    print(
        f"The listing carries {json_mib:.1f} MiB of JSON; median of {args.rounds} rounds; each "
        "contender in its own process; RSS growth over its resident memory after imports (the "
        "peak reset there)."
    )
    print()
    print("| contender | seconds | items/s | client CPU s | RSS growth MiB | x the JSON |")
    print("|---|---:|---:|---:|---:|---:|")
    walls = {}
    for name, rounds in pulls.items():
        assert all(r[3] == args.items for r in rounds), (name, [r[3] for r in rounds])
        walls[name] = statistics.median(r[0] for r in rounds)
        cpu = statistics.median(r[1] for r in rounds)
        rss = max(r[2] for r in rounds)
        print(
            f"| {name} | {walls[name]:.2f} | {args.items / walls[name]:.0f} | {cpu:.1f} "
            f"| {rss:.0f} | {rss / json_mib:.1f} |"
        )
    print()
    officials = [w for n, w in walls.items() if n.startswith("official")]
    for name in ("platform-eval, iter_results", "platform-eval, get_results"):
        if officials:
            print(f"- {name}: {min(officials) / walls[name]:.1f}x the faster official contender")
    print()
    print(f"## get_item of one agent item ({args.gets} reads each, sequential)")
    print()
    print(
        "The three contenders share one process and take turns read by read, in a shuffled "
        f"order; median of {args.rounds} rounds. Goal: <= 1.3x raw."
    )
    print()
    print("| contender | us per read | x raw |")
    print("|---|---:|---:|")
    medians = {n: statistics.median(v) for n, v in gets.items()}
    floor = medians["raw httpx GET + json.loads"]
    for name, seconds in medians.items():
        print(f"| {name} | {seconds * 1e6:.0f} | {seconds / floor:.2f} |")
    print()


if __name__ == "__main__":
    main()
