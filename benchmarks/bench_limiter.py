"""The adaptive limit's own cost per call as calls grow (issue 60, item 5): N tasks, every one
created at once, each taking a place among 32 at once and holding it for a 1 ms wait, through
``AdaptiveLimit`` and, as the floor, through a bare ``asyncio.Semaphore`` beside it. Prints the
process CPU per task for each N and the ratio of ours to the floor; a limit whose cost per task
grows with N wakes every waiter at each release.

    python benchmarks/bench_limiter.py [--sizes 100,1000,3000,10000]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from platform_eval._adaptive import AdaptiveLimit


async def _through_limit(n: int) -> None:
    limit = AdaptiveLimit(start=32, cap=32)

    async def one() -> None:
        async with limit.slot() as place:
            await asyncio.sleep(0.001)
            place.succeeded()

    await asyncio.gather(*(one() for _ in range(n)))


async def _through_semaphore(n: int) -> None:
    gate = asyncio.Semaphore(32)

    async def one() -> None:
        async with gate:
            await asyncio.sleep(0.001)

    await asyncio.gather(*(one() for _ in range(n)))


def _cpu_per_task(run: object, n: int, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        asyncio.run(run(n))  # type: ignore[operator]
        best = min(best, time.process_time() - started)
    return best / n * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1000,3000,10000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'tasks':>7} {'ours ms/task':>13} {'semaphore ms/task':>18} {'ratio':>6}")
    first = None
    for n in sizes:
        ours = _cpu_per_task(_through_limit, n)
        floor = _cpu_per_task(_through_semaphore, n)
        first = first or ours
        print(f"{n:>7} {ours:>13.4f} {floor:>18.4f} {ours / floor:>6.2f}")
    print(f"ours at {sizes[-1]} / ours at {sizes[0]}: {ours / first:.2f}x (flat is 1.0)")


if __name__ == "__main__":
    main()
