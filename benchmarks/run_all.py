"""Runs every ``bench_*.py`` and writes ``benchmarks/RESULTS.md`` with the machine and the date.

    python benchmarks/run_all.py [--quick]

``nox -s bench`` runs this. ``--quick`` passes each script smaller sizes (a smoke run, not
figures to quote). ``--only bench_x.py`` (repeatable) runs those scripts and keeps the other
sections of the existing file as they were, each marked with the date it was measured. A
script's own output is kept as it printed it: markdown as it is, plain
text in a code block.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).parent
QUICK = {
    "bench_upload.py": ["--cases", "300", "--rounds", "1"],
    "bench_list.py": ["--items", "2000", "--rounds", "1"],
    "bench_metrics.py": ["--invocations", "1000"],
    "bench_results.py": ["--items", "1000", "--rounds", "1", "--gets", "300"],
    "bench_emulator.py": ["--items", "500", "--rounds", "1"],
    "bench_memory.py": ["--cases", "1000"],
    "bench_judges.py": ["--cases", "80"],
    "bench_agent_runs.py": ["--cases", "20", "--rounds", "1", "--also-concurrency"],
    "bench_runs.py": ["--items", "300", "--rounds", "1"],
    "bench_optimize.py": ["--cases", "6", "--budget", "1"],
}
#: bench_upload.py's contenders for a user's whole upload: the eval set file, then a run.
_GOAL = ["--only", "platform-eval (eval set file, then", "--only", "official, create"]
#: ... and beside the official client's own upload path, as a user would thread it.
_WARM = ["--only", "platform-eval (eval set file)", "--only", "official, 16 threads"]
#: Scripts run more than once, each time with these arguments (the issues' latency rows: 300
#: cases at 20 ms a request, 1,000 at 30 ms).
VARIANTS = {
    "bench_upload.py": [
        [],
        ["--cases", "300", "--latency-ms", "20", "--rounds", "3"],
        ["--cases", "1000", "--latency-ms", "30"],
        # The goal of issue 39: 5x the official SDK's own upload path at 300 and 3,000 cases.
        ["--cases", "300", "--rounds", "5", *_GOAL],
        ["--cases", "3000", "--rounds", "2", *_GOAL],
        # Issue 51, item 20: 5x the official client's Cloud Storage write and item create per
        # case (16 threads, then the set) at 300 and 3,000 cases, both warm, 20 ms a request.
        ["--cases", "300", "--rounds", "5", "--latency-ms", "20", "--warm", *_WARM],
        ["--cases", "3000", "--rounds", "3", "--latency-ms", "20", "--warm", *_WARM],
    ],
    # Trajectory scoring alone beside google-adk's (issue 39), then with ROUGE.
    "bench_metrics.py": [["--trajectory-only"], []],
    # Judge calls at a fixed concurrency beside ADK, then --judge-concurrency auto (issue 38).
    "bench_judges.py": [[], ["--adaptive"]],
    # run --agent beside adk eval, then against a model with a quota of 24 calls at once.
    "bench_agent_runs.py": [[], ["--quota", "24"]],
    # adk optimize beside ours: the default size, then 48 training cases (issue 54).
    "bench_optimize.py": [[], ["--cases", "48", "--validation", "12", "--budget", "4"]],
    # Issue 53's size: 1,000 cases against adk api_server, beside the same agent in-process.
    "bench_served_agents.py": [
        ["--cases", "1000"],
        ["--cases", "1000", "--session-service-uri", "memory://"],
    ],
}
PACKAGES = ("platform-eval", "google-cloud-aiplatform", "google-genai", "google-adk", "pydantic")


def _machine() -> list[str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    return [
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}; {', '.join(versions)}",
    ]


def _sections(path: Path) -> dict[str, str]:
    """Each script's section of an earlier RESULTS.md, from its marker to the next one."""
    if not path.exists():
        return {}
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in path.read_text().splitlines():
        if line.startswith("<!-- bench_"):
            current = found.setdefault(line.split()[1].rstrip(":"), [])
        if current is not None:
            current.append(line)
    return {name: "\n".join(lines).rstrip() for name, lines in found.items()}


def _run(script: Path, variant: list[str], quick: bool) -> list[str]:
    """The section of one run of ``script`` with ``variant``'s arguments."""
    extra = [*(QUICK.get(script.name, []) if quick else []), *variant]
    label = " ".join([script.name, *variant])
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(script), *extra],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    output = done.stdout.strip()
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    # Another process's work slows every contender: the 1-minute load says how busy it was.
    load = f"load {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    lines = [f"<!-- {label}: {seconds:.0f} s, exit {done.returncode}, measured {today}, {load} -->"]
    if output.startswith("## "):
        lines.append(output)
    else:
        lines += [f"## {script.name}", "", "```", output, "```"]
    if done.returncode:
        lines += ["", "```", done.stderr.strip()[-2000:], "```"]
    print(f"{label}: {seconds:.0f} s, exit {done.returncode}", file=sys.stderr)
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--only", action="append", default=[], help="run only this script")
    args = parser.parse_args()
    kept = _sections(args.output) if args.only else {}
    sections = ["# Benchmark results", "", *_machine(), ""]
    if args.quick:
        sections += ["Quick sizes (a smoke run): not figures to quote.", ""]
    for script in sorted(HERE.glob("bench_*.py")):
        if args.only and script.name not in args.only:
            if script.name in kept:
                sections += [kept[script.name], ""]
            continue
        for variant in VARIANTS.get(script.name, [[]]):
            sections += _run(script, variant, args.quick)
    args.output.write_text("\n".join(sections) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
