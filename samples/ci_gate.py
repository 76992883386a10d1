"""Gate CI on an evaluation: JUnit for the test report, Markdown for the job summary, exit code.

    python samples/ci_gate.py                       # the embedded emulator, no cloud needed
    python samples/ci_gate.py --project my-project  # the real service

Evaluates the sample eval set against traces recorded from the agent, with the thresholds of
its eval_config.json (service_eval_config.json on the service, which computes its own
metrics); writes junit.xml, appends a summary to $GITHUB_STEP_SUMMARY when set, and exits 1
when a threshold is missed (the same as `platform-eval run ... --output junit.xml`).
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.results import fetch_results

DATA = Path(__file__).resolve().parent / "data"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--project", help="Google Cloud project (default: the embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--junit", default=str(Path(tempfile.mkdtemp()) / "junit.xml"))
parser.add_argument("--config", help="an eval config (default: the sample's, for the target)")
args = parser.parse_args()

with connect(args.project, args.location) as target:
    # ADK's criteria where the emulator scores; the service computes its own metrics.
    default = "eval_config.json" if target.computes_locally else "service_eval_config.json"
    evaluation = jobs.evaluate(
        target.client,
        DATA / "weather.evalset.json",
        traces=[DATA / "weather_traces.otlp.json"],
        config=args.config or DATA / default,
        poll_interval=target.poll_interval,
    )
    results = fetch_results(
        target.client, evaluation.run, thresholds=evaluation.thresholds, items=evaluation.results
    )

Path(args.junit).write_text(results.to_junit())
if os.environ.get("GITHUB_STEP_SUMMARY"):
    with open(os.environ["GITHUB_STEP_SUMMARY"], "a") as summary:
        summary.write(results.to_markdown())
print(results.to_table())
print(f"JUnit report: {args.junit}")
sys.exit(0 if results.passed else 1)
