"""Served cases as they grow (issue 60, item 5): ``platform-eval run --agent URL`` against one
``adk api_server`` (a process of its own, ``memory://`` sessions), beside a minimal httpx + SSE
loop on the same server, at each size of ``--sizes``.

    python benchmarks/bench_served_loop.py [--sizes 100,1000,10000] [--latency-ms 100]

The agent is the sample travel agent, its model the fake Gemini server of the tests taking
``--latency-ms`` a call. The loop is what any client must do, and no more: per case a session
made, each user message of the case sent to ``/run_sse`` and its events parsed, the session read
back; 32 cases at once, as our adaptive limit's cap. Each contender runs in a process of its
own; its CPU (user + system, from the kernel) and wall time are printed, per case, with ours
beside the loop's. Issue 60's goals: our CPU a case flat (within 1.2x from the smallest size to
the largest) and within 1.5x of the loop's; our wall within 1.1x of the loop's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from agent_script import travel_rule  # noqa: E402  (the tests folder, added above)
from bench_agent_runs import eval_set, timed  # noqa: E402
from bench_served_agents import _free_port, _wait_for  # noqa: E402
from fake_gemini import fake_gemini  # noqa: E402

#: The loop: its cases from the eval set file, 32 at once.
LOOP = r"""
import asyncio, json, sys
import httpx

url, path = sys.argv[1], sys.argv[2]
cases = json.load(open(path))["eval_cases"]

async def case(http, gate, index, case):
    async with gate:
        sessions = f"/apps/travel_agent/users/u/sessions"
        made = (await http.post(sessions, json={"state": {}})).json()
        for turn in case["conversation"]:
            body = {"appName": "travel_agent", "userId": "u", "sessionId": made["id"],
                    "newMessage": turn["user_content"], "streaming": False}
            async with http.stream("POST", "/run_sse", json=body) as answer:
                async for line in answer.aiter_lines():
                    if line.startswith("data:"):
                        json.loads(line[5:])
        (await http.get(f"{sessions}/{made['id']}")).json()

async def main():
    gate = asyncio.Semaphore(32)
    limits = httpx.Limits(max_connections=34, max_keepalive_connections=32)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as http:
        await asyncio.gather(*(case(http, gate, i, c) for i, c in enumerate(cases)))

asyncio.run(main())
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--latency-ms", type=float, default=100)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    bin_dir = Path(sys.executable).parent
    with (
        tempfile.TemporaryDirectory() as tmp,
        fake_gemini(travel_rule, delay=args.latency_ms / 1000) as fake,
    ):
        folder = Path(tmp)
        shutil.copytree(HERE.parent / "samples" / "agent" / "travel_agent", folder / "travel_agent")
        env = {**os.environ, "GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "bench"}
        env.pop("PLATFORM_EVAL_EMULATOR_HOST", None)
        print(f"adk api_server (memory:// sessions), {args.latency_ms:g} ms a model call, a fresh "
              f"one for each size; load before: {os.getloadavg()[0]:.2f}")  # fmt: skip
        print(f"{'cases':>6} {'ours CPU/case':>14} {'loop CPU/case':>14} {'CPU x':>6} "
              f"{'ours wall':>10} {'loop wall':>10} {'wall x':>7} "
              f"{'not evaluated':>14}")  # fmt: skip
        first = per_ours = None
        for size in sizes:
            cases = folder / f"bench{size}.evalset.json"
            cases.write_text(json.dumps(eval_set(size)))
            shutil.rmtree(folder / ".platform-eval", ignore_errors=True)
            # A fresh server a size: one that kept the sessions of the size before would
            # answer our case ids 409 (taken), and the loop's server-chosen ids never.
            with _api_server(bin_dir, folder, env) as url:
                loop_wall, loop_cpu, _ = timed(
                    [sys.executable, "-c", LOOP, url, str(cases)], folder, env
                )
            with _api_server(bin_dir, folder, env) as url:
                ours_wall, ours_cpu, out = timed(
                    [str(bin_dir / "platform-eval"), "-q", "run", cases.name, "--agent", url,
                     "--metrics", "tool_trajectory_avg_score", "--format", "json"],
                    folder, env,
                )  # fmt: skip
            lost = sum(1 for r in json.loads(out)["rows"] if r.get("score") is None)
            per_ours, per_loop = ours_cpu / size * 1000, loop_cpu / size * 1000
            first = first or per_ours
            print(f"{size:>6} {per_ours:>11.2f} ms {per_loop:>11.2f} ms "
                  f"{per_ours / per_loop:>6.2f} {ours_wall:>8.1f} s {loop_wall:>8.1f} s "
                  f"{ours_wall / loop_wall:>7.2f} {lost:>14}")  # fmt: skip
        assert per_ours is not None and first is not None
        print(f"ours CPU a case, largest / smallest size: {per_ours / first:.2f}x; "
              f"load after: {os.getloadavg()[0]:.2f}")  # fmt: skip


@contextlib.contextmanager
def _api_server(bin_dir: Path, folder: Path, env: dict[str, str]) -> Iterator[str]:
    """A new ``adk api_server`` on ``folder`` (its own process, sessions in memory); its URL."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [str(bin_dir / "adk"), "api_server", "--port", str(port),
         "--session_service_uri", "memory://", str(folder)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for(url, server)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
