"""Running an agent on an eval set: ``platform-eval run --agent`` beside ``adk eval``.

    python benchmarks/bench_agent_runs.py [--cases 200] [--latency-ms 100] [--quota 24] [--rounds 3]

The agent is the sample travel agent (samples/agent/: tools and session state), its model the
fake Gemini server of the tests, scripted per user message and taking ``--latency-ms`` per
call. The eval set repeats its four cases (single-turn, multi-turn, session state, a miss) to
``--cases`` cases; the criteria are tool_trajectory_avg_score and response_match_score.

Both commands run as a user runs them, each in a process of its own, at their default
concurrency, against the same server, and are timed from start to exit: ``adk eval AGENT
EVALSET --config_file_path CONFIG`` (google-adk's command) and ``platform-eval run EVALSET
--agent AGENT --config CONFIG`` (embedded emulator, a fresh folder: nothing resumed, nothing
cached). The per-case scores of both are compared. Goal (issue 24): at least 3x faster than
adk eval, the same scores.

Ours runs at its default, ``--agent-concurrency auto``, then at fixed numbers. ``--quota N``
has the model answer 429 to calls beyond N at once (a quota): issue 38's goal is auto finishing
every case, at least 3x faster than adk eval at its default, with under 2% of calls answered
429; without a quota, auto within 1.25x of the best fixed number.

Every command runs ``--rounds`` times (3), a round running each once, adk eval first; the table
gives the median time with its range, and the median of the rounds' ratios to adk eval. One run
of ours varies by a second under a quota (when the limit is first cut, and by how much, moves
the rest of the run), which a single round reports as the whole truth.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
sys.path.insert(0, str(TESTS))

from agent_script import travel_rule  # noqa: E402  (the tests folder, added above)
from fake_gemini import fake_gemini  # noqa: E402

CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}


def eval_set(cases: int) -> dict[str, Any]:
    base = json.loads((HERE.parent / "samples" / "agent" / "travel.evalset.json").read_text())
    out = []
    for index in range(cases):
        case = json.loads(json.dumps(base["eval_cases"][index % len(base["eval_cases"])]))
        case["eval_id"] = f"{case['eval_id']}_{index:04d}"
        out.append(case)
    return {"eval_set_id": "travel_bench", "eval_cases": out}


def adk_scores(folder: Path) -> dict[tuple[str, str], float]:
    [written] = (folder / "travel_agent" / ".adk" / "eval_history").glob("*.json")
    result = json.loads(written.read_text())
    if isinstance(result, str):
        result = json.loads(result)
    return {
        (case["eval_id"], metric["metric_name"]): metric["score"]
        for case in result["eval_case_results"]
        for metric in case["overall_eval_metric_results"]
        if metric["metric_name"] in CONFIG["criteria"]
    }


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall time, CPU time (the command and every process it started, user + system) and the
    command's output."""
    before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command[0]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return elapsed, _children_cpu() - before, done.stdout


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _ours(bin_dir: Path) -> list[str]:
    """``platform-eval run --agent`` as a user types it, the report as JSON."""
    return [
        str(bin_dir / "platform-eval"), "-q", "run", "bench.evalset.json", "--agent",
        "travel_agent", "--config", "eval_config.json", "--format", "json",
    ]  # fmt: skip


def _same(out: str, theirs: dict[tuple[str, str], float]) -> bool:
    ours = {(r["evalCaseId"], r["metric"]): r["score"] for r in json.loads(out)["rows"]}
    return ours.keys() == theirs.keys() and all(abs(ours[k] - theirs[k]) < 1e-9 for k in ours)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=100)
    parser.add_argument(
        "--also-concurrency",
        type=int,
        nargs="*",
        default=[4, 16, 32],
        metavar="N",
        help="ours again at these --agent-concurrency values (same scores checked)",
    )
    parser.add_argument(
        "--quota", type=int, default=None, help="the model answers 429 beyond N calls at once"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="every command this many times; medians printed"
    )
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    # Both commands start from compiled modules, as a wheel's install leaves them (pip compiles
    # google-adk's at install; an editable checkout run where PYTHONDONTWRITEBYTECODE is set
    # would compile ours again in every process, the worker processes among them).
    compileall.compile_dir(str(HERE.parent / "platform_eval"), quiet=1)
    with (
        tempfile.TemporaryDirectory() as tmp,
        fake_gemini(travel_rule, delay=args.latency_ms / 1000, quota=args.quota) as fake,
    ):
        folder = Path(tmp)
        shutil.copytree(HERE.parent / "samples" / "agent" / "travel_agent", folder / "travel_agent")
        (folder / "bench.evalset.json").write_text(json.dumps(eval_set(args.cases)))
        (folder / "eval_config.json").write_text(json.dumps(CONFIG))
        env = {
            **os.environ,
            "GOOGLE_GEMINI_BASE_URL": fake.url,
            "GOOGLE_API_KEY": "bench-key",
            "ADK_DISABLE_LOAD_DOTENV": "1",
        }
        env.pop("GOOGLE_GENAI_USE_VERTEXAI", None)
        env.pop("PLATFORM_EVAL_EMULATOR_HOST", None)
        env.pop("GOOGLE_CLOUD_PROJECT", None)

        rows: dict[str, list[_Round]] = {}
        theirs: dict[tuple[str, str], float] = {}
        for _ in range(args.rounds):
            # Each round runs every command once, adk eval first: a slow spell of the machine
            # then weighs on one round of each, and each round's ratios are taken.
            shutil.rmtree(folder / "travel_agent" / ".adk", ignore_errors=True)
            before, refused = len(fake.seen), fake.refused
            elapsed, cpu, _ = timed(
                [
                    str(bin_dir / "adk"),
                    "eval",
                    "travel_agent",
                    "bench.evalset.json",
                    "--config_file_path",
                    "eval_config.json",
                ],
                folder,
                env,
            )
            rows.setdefault(ADK, []).append(
                _Round(elapsed, cpu, len(fake.seen) - before, fake.refused - refused, True)
            )
            theirs = adk_scores(folder)
            for concurrency in ["auto", *map(str, args.also_concurrency)]:
                shutil.rmtree(folder / ".platform-eval", ignore_errors=True)
                before, refused = len(fake.seen), fake.refused
                elapsed, cpu, out = timed(
                    [*_ours(bin_dir), "--agent-concurrency", concurrency], folder, env
                )
                rows.setdefault(concurrency, []).append(
                    _Round(
                        elapsed,
                        cpu,
                        len(fake.seen) - before,
                        fake.refused - refused,
                        _same(out, theirs),
                    )
                )

    quota = f", a quota of {args.quota} calls at once (429 beyond)" if args.quota else ""
    print(
        f"### Running the agent: {args.cases} cases, model latency {args.latency_ms:g} ms{quota}\n"
    )
    rounds = f"median of {args.rounds} rounds (range)" if args.rounds > 1 else "one round"
    print(
        f"| command | concurrency | model calls a round | answered 429 | wall time, {rounds} "
        "| CPU time | vs adk eval |"
    )
    print("|---|---|---|---|---|---|---|")
    for concurrency, runs in rows.items():
        if concurrency == ADK:
            command, level = "adk eval (google-adk)", "4 (its default)"
        elif concurrency == "auto":
            command, level = "platform-eval run --agent", "auto (its default)"
        else:
            command = f"platform-eval run --agent --agent-concurrency {concurrency}"
            level = concurrency
        calls = sum(r.calls for r in runs)
        refused = sum(r.refused for r in runs)
        # Each round's ratio: adk eval's time in that round over this command's.
        ratio = _spread([a.seconds / r.seconds for a, r in zip(rows[ADK], runs, strict=True)], "x")
        same = all(r.same for r in runs)
        print(
            f"| {command} | {level} | {calls // len(runs)} | {refused} "
            f"({refused / max(1, calls):.1%}) | {_spread([r.seconds for r in runs], ' s')} | "
            f"{_spread([r.cpu for r in runs], ' s')} | "
            + ("1.0x" if concurrency == ADK else f"{ratio} faster")
            + ("" if same else " (SCORES DIFFER)")
            + " |"
        )
    fixed = [
        statistics.median(r.seconds for r in runs)
        for level, runs in rows.items()
        if level not in (ADK, "auto")
    ]
    if fixed:
        auto = statistics.median(r.seconds for r in rows["auto"])
        print(f"\nauto against the best fixed concurrency: {auto / min(fixed):.2f}x its time.")
    # adk eval's calls: no 429 at its four at once, so each is a call the model must answer.
    needed = rows[ADK][0].calls
    floor = needed * args.latency_ms / 1000 / 4
    same = all(r.same for runs in rows.values() for r in runs)
    print(
        f"\nSame per-case scores on both sides: {'yes' if same else 'NO'} "
        f"({2 * args.cases} case-metric scores a run). At concurrency 4 the model alone takes at "
        f"least {floor:.1f} s ({needed} calls x {args.latency_ms:g} ms / 4): no command "
        "running four cases at a time can be 3x faster than adk eval, which runs four too: "
        "auto raises it while the model keeps up."
    )


ADK = "adk eval"


@dataclass
class _Round:
    seconds: float
    #: CPU seconds of the command's processes (the fake model runs in this one: not counted).
    cpu: float
    calls: int
    refused: int
    same: bool


def _spread(values: list[float], unit: str) -> str:
    """The median, and the range when there are several."""
    middle = f"{statistics.median(values):.1f}{unit}"
    if len(values) == 1:
        return middle
    return f"{middle} ({min(values):.1f}-{max(values):.1f})"


if __name__ == "__main__":
    main()
