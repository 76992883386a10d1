"""Emulator creates/s beside the least a server can do: a starlette app storing a JSON blob.

    python benchmarks/bench_emulator.py [--items 3000] [--rounds 3] [--concurrency 16]

Both servers run in a process of their own, on uvicorn with the same settings, over SQLite in
WAL mode with ``synchronous=NORMAL``, committing each create. The same client (httpx, async,
``--concurrency`` requests in flight) posts the same ~2 KB agent item to each:

- ``emulator``: ``POST /v1beta1/.../evaluationItems``, which checks the body against the
  schema (unknown fields, oneofs), assigns a name and a creation time, stores it and answers
  with the stored item;
- ``minimal starlette + SQLite``: ``POST /items``, which parses the JSON, stores the body as
  it came under a new id, and answers with it. It checks nothing: the floor of the stack.

Figures: median of ``--rounds`` rounds of creates/s; the goal is the emulator within 2x.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from _serve import _serve
from bench_upload import make_item


def _minimal_app(db_path: str) -> Any:
    import itertools
    import sqlite3

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    db = sqlite3.connect(db_path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    ids = itertools.count(1)

    async def create(request: Request) -> Response:
        body = await request.body()
        json.loads(body)  # refuse what is not JSON, as any server would
        db.execute("INSERT INTO blobs (id, body) VALUES (?, ?)", (next(ids), body.decode()))
        return Response(body, media_type="application/json")

    return Starlette(routes=[Route("/items", create, methods=["POST"])])


def _serve_minimal(port_queue: Any, db_path: str) -> None:
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port_queue.put(sock.getsockname()[1])
    config = uvicorn.Config(
        _minimal_app(db_path), log_level="warning", lifespan="off", access_log=False
    )
    uvicorn.Server(config).run(sockets=[sock])


async def _post_all(url: str, body: bytes, items: int, concurrency: int) -> float:
    headers = {"content-type": "application/json"}
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        left = iter(range(items))

        async def worker() -> None:
            for _ in left:
                response = await client.post(url, content=body, headers=headers)
                response.raise_for_status()

        await client.post(url, content=body, headers=headers)  # connections and imports warm
        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return items / (time.perf_counter() - start)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measure(
    target: Any, args: tuple[Any, ...], path: str, body: bytes, items: int, concurrency: int
) -> tuple[float, float]:
    """(creates/s, server CPU ms per create) of a server started as ``target(queue, *args)``."""
    queue: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=target, args=(queue, *args), daemon=True)
    server.start()
    try:
        url = f"http://127.0.0.1:{queue.get(timeout=60)}{path}"
        for _ in range(200):  # until it listens
            try:
                httpx.get(url)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        assert server.pid is not None
        before = _cpu_seconds(server.pid)
        rate = asyncio.run(_post_all(url, body, items, concurrency))
        cpu = _cpu_seconds(server.pid) - before
        return rate, 1000 * cpu / (items + 1)
    finally:
        server.terminate()
        server.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    body = json.dumps(make_item(0, 3)).encode()
    servers = {
        "emulator": (
            _serve,
            "/v1beta1/projects/bench/locations/us-central1/evaluationItems",
            lambda db: (db, False),
        ),
        "minimal starlette + SQLite": (_serve_minimal, "/items", lambda db: (db,)),
    }
    measured: dict[str, list[tuple[float, float]]] = {name: [] for name in servers}
    for _ in range(args.rounds):
        for name, (target, path, server_args) in servers.items():
            db = str(Path(tempfile.mkdtemp(prefix="bench-emulator-")) / "store.sqlite")
            measured[name].append(
                _measure(target, server_args(db), path, body, args.items, args.concurrency)
            )

    print(f"## Emulator creates: {args.items} items of {len(body)} bytes\n")
    print(
        f"{args.concurrency} requests in flight from one httpx client; median of {args.rounds} "
        "rounds; each server in its own process, SQLite in WAL mode, a commit per create. "
        "Server CPU is the server process's user + system time over the creates.\n"
    )
    print("| server | creates/s | server CPU ms per create |")
    print("|---|---:|---:|")
    rates = {name: statistics.median(r for r, _ in values) for name, values in measured.items()}
    cpus = {name: statistics.median(c for _, c in values) for name, values in measured.items()}
    for name in servers:
        print(f"| {name} | {rates[name]:,.0f} | {cpus[name]:.2f} |")
    minimal = "minimal starlette + SQLite"
    print(
        f"\nThe minimal app creates {rates[minimal] / rates['emulator']:.2f}x as fast as the "
        f"emulator; the emulator spends {cpus['emulator'] / cpus[minimal]:.2f}x its server CPU "
        "per create (goal: the emulator within 2x)."
    )


if __name__ == "__main__":
    main()
