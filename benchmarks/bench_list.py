"""List a collection of N items from the emulator: time per page, with and without its index.

    python benchmarks/bench_list.py [--items 20000] [--page-size 1000] [--rounds 3]

The database is seeded directly (N REQUEST items of about 2.5 KB, beside 4 other projects of
the same size, as a shared emulator holds), then served by the emulator in another process.
Each page is fetched over HTTP with raw httpx (the wire alone) and with ``Client.list_items``
(the wire plus our models); the same database without the listing index shows what the index
buys. Goal (issue 11): a page of 1,000 items in under 50 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from _serve import emulator_process

from platform_eval import Client
from platform_eval.emulator.store import Store

PROJECTS = 5


def _item(project: str, index: int) -> tuple[str, dict[str, Any]]:
    rid = uuid.uuid4().hex[:19]
    text = f"Case {index}: what is the weather in city {index % 97}? " * 20
    body = {
        "name": f"projects/{project}/locations/us-central1/evaluationItems/{rid}",
        "displayName": f"case-{index}",
        "evaluationItemType": "REQUEST",
        "evaluationRequest": {
            "prompt": {"text": text},
            "goldenResponse": {"text": text[:800]},
            "candidateResponses": [{"candidate": "agent", "text": text[:900]}],
        },
        "createTime": "2026-11-21T00:00:00Z",
    }
    return rid, body


def seed(db: str, items: int) -> None:
    store = Store(db)
    with store.transaction() as connection:
        for p in range(PROJECTS):
            project = f"bench-{p}"
            parent = f"projects/{project}/locations/us-central1"
            rows = []
            for index in range(items):
                rid, body = _item(project, index)
                rows.append((parent, "evaluationItems", rid, json.dumps(body)))
            connection.executemany(
                "INSERT INTO resources (parent, collection, rid, body) VALUES (?,?,?,?)", rows
            )
    store.close()


def _pages_raw(url: str, page_size: int) -> list[float]:
    times, token = [], None
    with httpx.Client() as http:
        while True:
            params = {"pageSize": str(page_size), **({"pageToken": token} if token else {})}
            started = time.perf_counter()
            answer = http.get(url, params=params)
            body = answer.json()
            times.append(time.perf_counter() - started)
            token = body.get("nextPageToken")
            if not token:
                return times


def _pages_client(client: Client, page_size: int | None) -> tuple[float, int]:
    started = time.perf_counter()
    count = sum(1 for _ in client.list_items(page_size=page_size))
    return time.perf_counter() - started, count


def measure(
    db: str, items: int, page_size: int, rounds: int, *, drop_index: bool = False
) -> dict[str, float]:
    with emulator_process(db, drop_index=drop_index) as base:
        url = f"{base}/v1beta1/projects/bench-2/locations/us-central1/evaluationItems"
        raw, full, small = [], [], []
        for _ in range(rounds):
            raw.append(statistics.median(_pages_raw(url, page_size)) * 1000)
            with Client("bench-2", api_endpoint=base) as client:
                seconds, count = _pages_client(client, None)
                assert count == items, count
                full.append(seconds)
                seconds, count = _pages_client(client, 100)
                small.append(seconds)
        return {
            "page_ms": statistics.median(raw),
            "list_all_s": statistics.median(full),
            "list_all_100_s": statistics.median(small),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--page-size", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        indexed = str(Path(folder) / "indexed.sqlite")
        seed(indexed, args.items)
        print(
            f"list {args.items} items ({PROJECTS * args.items} in the database), pages of "
            f"{args.page_size}, median of {args.rounds} rounds"
        )
        results = {}
        for label, drop in (("without the index", True), ("with the index", False)):
            results[label] = measure(
                indexed, args.items, args.page_size, args.rounds, drop_index=drop
            )
            figures = results[label]
            print(
                f"  {label:18} {figures['page_ms']:7.1f} ms per page (raw httpx)   "
                f"{figures['list_all_s']:6.2f} s to list all with Client.list_items "
                f"(its default page), {figures['list_all_100_s']:6.2f} s in pages of 100"
            )
        before, after = results["without the index"], results["with the index"]
        print(
            f"  index: {before['page_ms'] / after['page_ms']:.1f}x per page; goal < 50 ms per "
            f"page of 1000: {'met' if after['page_ms'] < 50 else 'NOT met'}; listing all: "
            f"{before['list_all_100_s'] / after['list_all_s']:.1f}x (pages of 100 without the "
            "index, the old default, against the new default with it)"
        )


if __name__ == "__main__":
    main()
