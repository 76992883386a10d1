"""Memory of an upload of N cases from an ADK eval set file: read a case at a time, or whole.

    python benchmarks/bench_memory.py [--cases 20000] [--turns 3]

Writes an eval set file of ``--cases`` three-turn cases (tool calls and answers), then in a
fresh process per contender uploads it to an emulator (in a process of its own) with
``jobs.upload_eval_set``:

- ``from the file``: the path, as ``platform-eval upload`` passes it: the file's text is kept
  and each case parsed when it is needed.
- ``parsed whole first``: the same job given ``load_eval_set(path)``, every case in memory
  (what every upload did before).

Figures: peak RSS growth over the process's RSS after its imports, beside the file's size and
the JSON Lines the upload sends; wall time. Goal (issue 11): memory within 2x the data the
upload touches (the file read and the items sent).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from _serve import emulator_process, in_child, peak_rss_mib


def make_case(index: int, turns: int) -> dict[str, Any]:
    conversation = []
    for turn in range(turns):
        city = f"city-{turn}"
        conversation.append(
            {
                "invocation_id": f"c{index}-t{turn}",
                "user_content": {
                    "role": "user",
                    "parts": [{"text": f"Case {index}, turn {turn}: weather in {city}?"}],
                },
                "final_response": {
                    "role": "model",
                    "parts": [{"text": f"It is {20 + turn} degrees in {city}, clear skies."}],
                },
                "intermediate_data": {
                    "tool_uses": [{"name": "get_weather", "args": {"city": city, "days": 3}}],
                    "tool_responses": [
                        {"name": "get_weather", "response": {"temp": 20 + turn, "sky": "clear"}}
                    ],
                },
            }
        )
    return {
        "eval_id": f"case-{index}",
        "conversation": conversation,
        "session_input": {"app_name": "weather", "user_id": "user"},
    }


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _contender(url: str, path: str, whole: bool, workdir: str, out: Any) -> None:
    from platform_eval import Client, jobs
    from platform_eval.formats import load_eval_set

    baseline = _rss_mib()
    started = time.perf_counter()
    with Client(f"mem-{int(whole)}", api_endpoint=url) as client:
        source: Any = load_eval_set(path) if whole else path
        uploaded = jobs.upload_eval_set(client, source, manifest=Path(workdir) / f"{whole}.jsonl")
    seconds = time.perf_counter() - started
    peak = peak_rss_mib()
    out.put((len(uploaded.evaluation_items or []), seconds, peak - baseline))


def _jsonl_mib(path: str) -> float:
    """The JSON Lines the upload sends for the file's items, as it labels them."""
    from platform_eval._operations import jsonl
    from platform_eval.formats.convert import ConversionReport
    from platform_eval.formats.stream import open_eval_set
    from platform_eval.jobs.tasks import _pending_cases
    from platform_eval.jobs.upload import _labelled

    cases = open_eval_set(path)
    assert cases is not None
    pending = _pending_cases(cases, ConversionReport(), None)
    return sum(len(jsonl([_labelled(k, build, "set")])) + 1 for k, build in pending) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="bench-memory-")
    path = str(Path(workdir) / "cases.evalset.json")
    with open(path, "w") as file:
        cases = [make_case(i, args.turns) for i in range(args.cases)]
        json.dump({"eval_set_id": "bench-memory", "eval_cases": cases}, file)
        del cases
    file_mib = os.path.getsize(path) / 2**20
    sent_mib = _jsonl_mib(path)
    touched = file_mib + sent_mib
    print(f"## Upload memory: {args.cases} cases x {args.turns} turns from an eval set file")
    print()
    print(
        f"The file is {file_mib:.1f} MiB; the upload sends {sent_mib:.1f} MiB of JSON Lines "
        f"({touched:.1f} MiB touched in all). One round; each contender in a fresh process; "
        "peak RSS growth over the process after its imports."
    )
    print()
    print("| contender | items | seconds | peak RSS growth MiB | x the data touched |")
    print("|---|---:|---:|---:|---:|")
    with emulator_process() as url:
        for label, whole in (("from the file", False), ("parsed whole first", True)):
            items, seconds, growth = in_child(_contender, url, path, whole, workdir)
            assert items == args.cases, (label, items)
            print(f"| {label} | {items} | {seconds:.1f} | {growth:.0f} | {growth / touched:.2f} |")
    print()


if __name__ == "__main__":
    main()
