"""Every rubric verdict of a run, with its reasoning, per eval case and metric.

    python samples/fetch_rubric_verdicts.py                      # evaluates the sample first
    python samples/fetch_rubric_verdicts.py RUN --project my-project

Without RUN, the sample eval set is evaluated against its recorded traces first (on an embedded
emulator unless --project is given). With pandas installed the verdicts also come as a DataFrame.
"""

import argparse
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.results import fetch_results

DATA = Path(__file__).resolve().parent / "data"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("run", nargs="?", help="an evaluation run's name or id")
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
args = parser.parse_args()

with connect(args.project, args.location) as target:
    run = args.run
    if run is None:
        config = "eval_config.json" if target.computes_locally else "service_eval_config.json"
        run = jobs.evaluate(
            target.client,
            DATA / "weather.evalset.json",
            traces=[DATA / "weather_traces.otlp.json"],
            config=DATA / config,
            poll_interval=target.poll_interval,
        ).run
    results = fetch_results(target.client, run)

for row in results.rows:
    for verdict in row.verdicts:
        print(
            f"{row.eval_case_id} [{row.candidate}] {row.metric} {verdict.rubric_id}: {verdict.mark}"
        )
        print(f"    rubric:    {verdict.rubric}")
        print(f"    reasoning: {verdict.reasoning}")

try:
    import pandas  # noqa: F401
except ImportError:
    pass
else:
    frame = results.to_dataframe()
    print(frame[["evalCaseId", "metric", "score", "status"]].to_string(index=False))
