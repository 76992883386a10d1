"""An agents-cli project's evaluation, end to end: its dataset, its trace file, its config.

    python samples/agents_cli_project.py                        # embedded emulator
    python samples/agents_cli_project.py --project my-project   # the real service
    GOOGLE_API_KEY=... python samples/agents_cli_project.py --agent samples/agent/travel_agent

agents-cli keeps golden cases in `tests/eval/datasets/*-dataset.json`, writes the agent's runs
as trace files (`agents-cli eval generate`, `artifacts/traces/`) and grades them with
`eval_config.yaml`. This sample checks the dataset and the config as `platform-eval validate`
does, grades the trace file as it is (what `agents-cli eval grade` does: rouge_1 by the target,
the config's two code metrics in this process) and prints the table. With --agent it first
writes a fresh trace file by running the agent on the dataset (what `platform-eval generate`
does) and grades that one instead.
"""

import argparse
import logging
import os
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.formats import load_eval_config, validate
from platform_eval.jobs.generate import generate_traces
from platform_eval.results import fetch_results

PROJECT = Path(__file__).resolve().parent / "agents_cli"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--agent", help="run this agent folder on the dataset first (needs Gemini)")
args = parser.parse_args()

dataset = PROJECT / "datasets" / "basic-dataset.json"
config_file = PROJECT / "eval_config.yaml"
for path in (dataset, config_file):
    problems = validate(path)
    print(f"{path.name}: {'ok' if not problems else '; '.join(map(str, problems))}")
    if problems:
        raise SystemExit(2)
config = load_eval_config(config_file)
print(f"metrics: {', '.join(config.criteria)} (code metrics: {', '.join(config.code_metrics)})")

traces = PROJECT / "artifacts" / "traces" / "traces_example.json"
if args.agent:
    if not (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")):
        print("the agent's model is Gemini: set GOOGLE_API_KEY to run it")
        raise SystemExit(0)
    logging.getLogger("google_adk").setLevel(logging.CRITICAL)
    generated = generate_traces(dataset, args.agent, Path("artifacts/traces/traces_sample.json"))
    print(generated.summary())
    traces = generated.path

with connect(args.project, args.location) as target:
    # The trace file holds the agent's answers: it is graded as it is.
    evaluation = jobs.evaluate(
        target.client, traces, config=config, poll_interval=target.poll_interval
    )
    results = fetch_results(
        target.client, evaluation.run, thresholds=evaluation.thresholds, items=evaluation.results
    )
print(results.to_table())
