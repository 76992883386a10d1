"""Offline evaluation of recorded traces against a golden eval set.

    python samples/offline_eval_from_traces.py                        # embedded emulator
    python samples/offline_eval_from_traces.py --project my-project   # the real service
    python samples/offline_eval_from_traces.py --traces my_session.json other_traces.otlp.json

Reads the traces (OpenTelemetry spans in Jaeger, OTLP or Tempo form, or ADK session exports),
shows each conversation found and anything that could not be read, pairs the conversations with
the eval set's cases by their first user message, and scores them: the trajectory against the
expected tool calls, the final answers against the golden ones, and the eval set's rubrics.
Locally with ADK's metrics; on the service with its trajectory, ROUGE and rubric metrics.
"""

import argparse
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.results import fetch_results
from platform_eval.traces import load_conversations

DATA = Path(__file__).resolve().parent / "data"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--evalset", default=str(DATA / "weather.evalset.json"))
parser.add_argument("--traces", nargs="+", default=[str(DATA / "weather_traces.otlp.json")])
args = parser.parse_args()

for path in args.traces:
    for conversation in load_conversations(path):
        turns = len(conversation.agent_data.turns or [])
        print(
            f"{Path(path).name}: conversation {conversation.id}, {turns} turns, "
            f"tools {conversation.tool_calls}, first message {conversation.first_user_message!r}"
        )
        for note in conversation.notes:
            print(f"  note: {note}")

with connect(args.project, args.location) as target:
    evaluation = jobs.evaluate(
        target.client,
        args.evalset,
        traces=args.traces,
        # ADK's criteria where the emulator scores; the service computes its own metrics.
        metrics=(
            [
                "tool_trajectory_avg_score",
                "response_match_score",
                "rubric_based_final_response_quality_v1",
            ]
            if target.computes_locally
            else ["trajectory_exact_match", "rouge_1", "final_response_quality_v1"]
        ),
        poll_interval=target.poll_interval,
    )
    results = fetch_results(target.client, evaluation.run, items=evaluation.results)

print(f"run {evaluation.run.state}: {evaluation.upload.matches.summary()}")
for row in results.rows:
    print(
        f"{row.eval_case_id} {row.candidate} {row.metric} {row.status.value} "
        f"{'-' if row.score is None else f'{row.score:.3f}'}"
    )
