"""Is the judge right? Its verdicts on a run beside people's labels of the same verdicts.

    python samples/judge_agreement.py                          # embedded emulator
    python samples/judge_agreement.py --project my-project     # the real service
    python samples/judge_agreement.py --labels my-labels.jsonl --min-kappa 0.6

Scores the sample traces against the sample eval set with its config (a rubric the local
judge decides, and ADK's computed criteria), writes the labels file to fill in (every judged
verdict with "verdict": null, what `platform-eval judges labels RUN` writes), then sets the
judge beside the labels given (samples/data/labels.jsonl: two raters): per metric and rubric,
accuracy, Cohen's kappa with a bootstrap interval, Krippendorff's alpha with several raters,
the confusion matrix and the disagreements. With --min-kappa it exits 1 when a kappa is lower,
as `judges agreement --min-kappa` gates CI.
"""

import argparse
import tempfile
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.results import fetch_results
from platform_eval.results.agreement import agreement, label_template, read_labels

DATA = Path(__file__).resolve().parent / "data"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--labels", default=str(DATA / "labels.jsonl"), help="people's labels")
parser.add_argument("--min-kappa", type=float, help="exit 1 under this kappa")
args = parser.parse_args()

with connect(args.project, args.location) as target:
    evaluation = jobs.evaluate(
        target.client,
        str(DATA / "weather.evalset.json"),
        traces=[str(DATA / "weather_traces.otlp.json")],
        # ADK's criteria where the emulator scores; the service judges its own rubric metric.
        config=str(DATA / "eval_config.json") if target.computes_locally else None,
        metrics=None if target.computes_locally else ["final_response_quality_v1"],
        poll_interval=target.poll_interval,
    )
    results = fetch_results(
        target.client, evaluation.run, thresholds=evaluation.thresholds, items=evaluation.results
    )

template = Path(tempfile.mkdtemp()) / "labels-to-fill.jsonl"
template.write_text(label_template(results))
print(f"{len(template.read_text().splitlines())} judged verdicts to label: {template}")

report = agreement(results, read_labels(args.labels))
print(report.to_table())
for why in report.unmatched:
    print(f"label not used: {why}")
if args.min_kappa is not None:
    failures = report.failures(args.min_kappa)
    for failure in failures:
        print(f"--min-kappa: {failure}")
    raise SystemExit(1 if failures else 0)
