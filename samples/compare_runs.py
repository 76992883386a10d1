"""Compare two runs of the same eval set: per-metric deltas, and what regressed or improved.

    python samples/compare_runs.py                        # an embedded emulator
    python samples/compare_runs.py --project my-project   # the real service

The baseline is the agent's recorded traces; the second run scores the same conversation with
its last answer changed, as a new agent version might answer. The comparison lists each metric's
mean before and after with the paired delta's 95% interval, a p-value and a verdict, and each
case, metric and rubric that got worse or better. With --fail-on-regression it exits 1 when a
metric regressed, as `platform-eval compare A B --fail-on-regression` does: the sample's one
case is too few for a significance test, so the stated any-drop rule decides and the report
says so (with --strict it exits 1 on any case that got worse, rubrics included).
"""

import argparse
import sys
from pathlib import Path

from google.genai import types as genai_types

from platform_eval import connect, jobs
from platform_eval.results import compare, fetch_results
from platform_eval.traces import load_conversations

DATA = Path(__file__).resolve().parent / "data"
EVALSET = DATA / "weather.evalset.json"
TRACES = DATA / "weather_traces.otlp.json"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument(
    "--fail-on-regression", action="store_true", help="exit 1 when a metric dropped beyond noise"
)
parser.add_argument("--strict", action="store_true", help="exit 1 when any case got worse")
args = parser.parse_args()

# The new version: the same conversation, with another last answer.
(recorded,) = load_conversations(TRACES)
changed = recorded.agent_data.model_copy(deep=True)
last_turn = (changed.turns or [])[-1]
answer = next(e for e in reversed(last_turn.events or []) if e.author != "user")
answer.content = genai_types.Content(
    role="model", parts=[genai_types.Part(text="Sorry, I can only tell the weather.")]
)
new_version = type(recorded)(id=f"{recorded.id}-v2", agent_data=changed, source="edited")

with connect(args.project, args.location) as target:
    config = DATA / ("eval_config.json" if target.computes_locally else "service_eval_config.json")
    runs = []
    for traces in ([TRACES], [new_version]):
        evaluation = jobs.evaluate(
            target.client,
            EVALSET,
            traces=traces,
            config=config,
            poll_interval=target.poll_interval,
        )
        runs.append(
            fetch_results(
                target.client,
                evaluation.run,
                thresholds=evaluation.thresholds,
                items=evaluation.results,
            )
        )

comparison = compare(*runs)
print(f"before: {runs[0].run.name}\nafter:  {runs[1].run.name}\n")
print(comparison.to_table())
failed = (args.fail_on_regression and comparison.regressed_metrics) or (
    args.strict and comparison.regressions
)
sys.exit(1 if failed else 0)
