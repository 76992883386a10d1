"""``platform-eval optimize`` beside ``adk optimize`` (google-adk's own command, GEPA), on the
same agent, cases, budget and fake models.

    python benchmarks/bench_optimize.py [--cases 12] [--budget 3] [--latency-ms 100]

The agent greets; its fake model answers right only when the instruction holds a phrase, and
the fake reflection model proposes that phrase. Both run GEPA with the same number of metric
calls (``max_metric_calls``: the original on every training case, then per proposal a
minibatch twice and every training case), each in a process of its own as a user runs it, timed
from start to exit. ``adk optimize`` chooses on the training cases given as its validation set
too, as ours does; ours then scores the original and the result on held-out validation cases
(the paired comparison that accepts or keeps the original): its agent calls include those.
Printed: wall time, agent model calls and reflection calls of each, and what each chose.
Issue 54's goal: faster at equal model calls, from concurrency and the cache.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from fake_gemini import Seen, fake_gemini  # noqa: E402  (the tests folder, added above)

PHRASE = "Always answer in French."
GEPA_ASKS = "I provided an assistant with the following instructions"
AGENT = """from google.adk.agents import Agent

root_agent = Agent(name="greeter", model="gemini-2.5-flash", instruction="Greet the user.")
"""
CONFIG = {"criteria": {"response_match_score": 0.5}}
MINIBATCH = 3


def _system(seen: Seen) -> str:
    parts = (seen.body.get("systemInstruction") or {}).get("parts") or []
    return " ".join(p.get("text", "") for p in parts)


def _rule(seen: Seen) -> str:
    if GEPA_ASKS in seen.prompt:
        return f"```\nGreet the user. {PHRASE}\n```"
    return "Bonjour !" if PHRASE in _system(seen) else "Hello!"


def _cases(ids: range, eval_set_id: str) -> dict[str, Any]:
    return {
        "eval_set_id": eval_set_id,
        "eval_cases": [
            {
                "eval_id": f"hello_{n}",
                "conversation": [
                    {
                        "invocation_id": f"i{n}",
                        "user_content": {"role": "user", "parts": [{"text": f"Hi, I am {n}"}]},
                        "final_response": {"role": "model", "parts": [{"text": "Bonjour !"}]},
                    }
                ],
            }
            for n in ids
        ],
    }


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, done.stdout


def _calls(seen: list[Seen]) -> tuple[int, int]:
    reflection = sum(1 for s in seen if GEPA_ASKS in s.prompt)
    return len(seen) - reflection, reflection


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=12, help="training cases")
    parser.add_argument("--validation", type=int, default=6, help="ours: held-out cases")
    parser.add_argument("--budget", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=100)
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    metric_calls = args.cases + args.budget * (2 * min(MINIBATCH, args.cases) + args.cases)
    with (
        tempfile.TemporaryDirectory() as tmp,
        fake_gemini(_rule, delay=args.latency_ms / 1000) as fake,
    ):
        folder = Path(tmp)
        agent = folder / "greeter"
        agent.mkdir()
        (agent / "__init__.py").write_text("from . import agent\n")
        (agent / "agent.py").write_text(AGENT)
        train = _cases(range(args.cases), "train")
        held = _cases(range(args.cases, args.cases + args.validation), "held")
        (agent / "train.evalset.json").write_text(json.dumps(train))
        (folder / "train.evalset.json").write_text(json.dumps(train))
        (folder / "held.evalset.json").write_text(json.dumps(held))
        (folder / "eval_config.json").write_text(json.dumps(CONFIG))
        sampler = {
            "eval_config": CONFIG,
            "app_name": "greeter",
            "train_eval_set": "train",
            "validation_eval_set": "train",
        }
        (folder / "sampler.json").write_text(json.dumps(sampler))
        optimizer = {"max_metric_calls": metric_calls, "reflection_minibatch_size": MINIBATCH}
        (folder / "optimizer.json").write_text(json.dumps(optimizer))
        env = {
            **dict(__import__("os").environ),
            "GOOGLE_GEMINI_BASE_URL": fake.url,
            "GOOGLE_API_KEY": "bench-key",
            "GOOGLE_GENAI_USE_VERTEXAI": "0",
        }
        adk_seconds, adk_out = _timed(
            [str(bin_dir / "adk"), "optimize", str(agent),
             "--sampler_config_file_path", "sampler.json",
             "--optimizer_config_file_path", "optimizer.json", "--log_level", "ERROR"],
            env, folder,
        )  # fmt: skip
        adk_agent, adk_reflection = _calls(list(fake.seen))
        fake.seen.clear()
        ours_seconds, _ = _timed(
            [str(bin_dir / "platform-eval"), "-q", "optimize", "train.evalset.json",
             "--agent", "greeter", "--config", "eval_config.json",
             "--validation", "held.evalset.json", "--budget", str(args.budget), "-o", "out"],
            env, folder,
        )  # fmt: skip
        ours_agent, ours_reflection = _calls(list(fake.seen))
        report = json.loads((folder / "out" / "optimize.json").read_text())
    adk_found = PHRASE in adk_out
    print(
        f"{args.cases} training cases, budget {args.budget} ({metric_calls} metric calls), "
        f"{args.latency_ms:g} ms per model call"
    )
    print(
        f"adk optimize:           {adk_seconds:6.1f} s, {adk_agent} agent model calls, "
        f"{adk_reflection} reflection calls, found the phrase: {adk_found}"
    )
    print(
        f"platform-eval optimize: {ours_seconds:6.1f} s, {ours_agent} agent model calls "
        f"({2 * args.validation} of them the held-out check), {ours_reflection} reflection "
        f"calls, {report['decision']}"
    )
    print(f"speed-up: {adk_seconds / ours_seconds:.2f}x")
    # At equal model calls: the same budget is given to both; the cache spares ours calls, and
    # concurrency makes each call it does make cost less of the wall time.
    print(
        f"wall time per agent model call: adk optimize {1000 * adk_seconds / adk_agent:.0f} ms, "
        f"platform-eval {1000 * ours_seconds / ours_agent:.0f} ms "
        f"({adk_seconds / adk_agent / (ours_seconds / ours_agent):.2f}x)"
    )


if __name__ == "__main__":
    main()
