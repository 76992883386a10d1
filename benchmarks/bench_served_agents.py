"""A served agent at scale: ``platform-eval run --agent URL`` against google-adk's own
``adk api_server`` (a process of its own), beside the same agent run in-process
(``--agent DIR``).

    python benchmarks/bench_served_agents.py [--cases 200] [--latency-ms 100] [--rounds 1]

The agent is the sample travel agent, its model the fake Gemini server of the tests taking
``--latency-ms`` per call; the eval set repeats its four cases to ``--cases``. Both commands run
as a user runs them, in processes of their own, at the default ``--agent-concurrency auto``,
and are timed from start to exit; their per-case scores must be equal.

The model-wait floor is the time the model calls alone would take at the cap of cases at once
(32): (calls x latency) / 32. Issue 53's goal: within 1.3x of it at 1,000
cases, no case lost. The CPU seconds of our command and of the api_server process are printed
beside the wall time: where the api_server's one process keeps a core busy for most of the run,
the served agent's own CPU is what bounds it, not the waiting.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from agent_script import travel_rule  # noqa: E402  (the tests folder, added above)
from bench_agent_runs import CONFIG, eval_set  # noqa: E402
from fake_gemini import fake_gemini  # noqa: E402


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(url: str, server: subprocess.Popen[bytes], seconds: float = 120) -> None:
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("adk api_server exited before it served")
        try:
            if httpx.get(f"{url}/list-apps", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit("adk api_server did not start")


def _cpu_seconds(pid: int) -> float:
    """A live process's CPU time so far (user and system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _scores(out: str) -> dict[tuple[str, str], float | None]:
    return {(r["evalCaseId"], r["metric"]): r["score"] for r in json.loads(out)["rows"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=100)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--session-service-uri",
        help="the api_server's sessions (memory://); default: as adk api_server keeps them out "
        "of the box, a SQLite file under .adk/, whose writes lock one another under load",
    )
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    with (
        tempfile.TemporaryDirectory() as tmp,
        fake_gemini(travel_rule, delay=args.latency_ms / 1000) as fake,
    ):
        folder = Path(tmp)
        shutil.copytree(HERE.parent / "samples" / "agent" / "travel_agent", folder / "travel_agent")
        (folder / "bench.evalset.json").write_text(json.dumps(eval_set(args.cases)))
        (folder / "eval_config.json").write_text(json.dumps(CONFIG))
        env = {**os.environ, "GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "bench"}
        env.pop("PLATFORM_EVAL_EMULATOR_HOST", None)
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        sessions = ["--session_service_uri", args.session_service_uri]
        server = subprocess.Popen(
            [
                str(bin_dir / "adk"),
                "api_server",
                "--port",
                str(port),
                *(sessions if args.session_service_uri else []),
                str(folder),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_for(url, server)
            rows = []
            cpu: dict[str, tuple[float, float]] = {}
            for agent in ("travel_agent", url):
                times, outs, calls = [], [], []
                ours, theirs = _children_cpu(), _cpu_seconds(server.pid)
                for _ in range(args.rounds):
                    shutil.rmtree(folder / ".platform-eval", ignore_errors=True)
                    before = len(fake.seen)
                    command = [
                        str(bin_dir / "platform-eval"), "-q", "run", "bench.evalset.json",
                        "--agent", agent, "--config", "eval_config.json", "--format", "json",
                    ]  # fmt: skip
                    started = time.perf_counter()
                    done = subprocess.run(command, cwd=folder, env=env, capture_output=True,
                                          text=True)  # fmt: skip
                    times.append(time.perf_counter() - started)
                    if done.returncode not in (0, 1):
                        raise SystemExit(f"{agent}: exit {done.returncode}\n{done.stderr[-2000:]}")
                    outs.append(done.stdout)
                    calls.append(len(fake.seen) - before)
                rows.append((agent, statistics.median(times), outs[-1], calls[-1]))
                cpu[agent] = (
                    (_children_cpu() - ours) / args.rounds,
                    (_cpu_seconds(server.pid) - theirs) / args.rounds,
                )
        finally:
            server.terminate()
            server.wait(timeout=30)
        (_, here_time, here_out, here_calls), (_, there_time, there_out, there_calls) = rows
        same = _scores(here_out) == _scores(there_out)
        lost = sum(1 for s in _scores(there_out).values() if s is None)
        print(f"{args.cases} cases, {args.latency_ms:g} ms a model call, fake Gemini; "
              f"{args.rounds} round(s), medians")  # fmt: skip
        print(f"  in-process  --agent DIR : {here_time:6.1f} s, {here_calls} model calls")
        kept = args.session_service_uri or "its default SQLite file"
        print(f"  served      --agent URL : {there_time:6.1f} s, {there_calls} model calls "
              f"(adk api_server in its own process, sessions in {kept})")  # fmt: skip
        print(f"  served / in-process     : {there_time / here_time:.2f}x")
        floor = there_calls * args.latency_ms / 1000 / 32
        ratio = there_time / floor
        print(f"  model-wait floor at 32 cases at once: {floor:.1f} s; served {ratio:.2f}x it")
        print(f"  scores equal: {same}; cases not evaluated: {lost}")
        why = {
            str(r.get("explanation"))
            for r in json.loads(there_out)["rows"]
            if r.get("score") is None
        }
        for reason in sorted(why)[:5]:
            print(f"    not evaluated: {reason[:300]}")
        ours_here, _ = cpu["travel_agent"]
        ours_there, server_there = cpu[url]
        print(f"  CPU: in-process run {ours_here:.1f} s; served run {ours_there:.1f} s ours + "
              f"{server_there:.1f} s the api_server's ({server_there / there_time:.0%} of a core "
              f"over the run; {os.cpu_count()} cores)")  # fmt: skip
        need = (ours_there + server_there) / (os.cpu_count() or 1)
        print(f"  the served run's CPU spread over every core takes {need:.1f} s at least: "
              f"{need / floor:.2f}x the model-wait floor before any waiting")  # fmt: skip


if __name__ == "__main__":
    main()
