"""Run an ADK agent with its tools mocked: each tool call answered from a file, no tool run.

    GOOGLE_API_KEY=... python samples/mocked_tools.py              # the sample travel agent
    python samples/mocked_tools.py --mocks golden                    # the cases' own responses
    python samples/mocked_tools.py --project my-project              # scored by the service

An eval run of an agent that books hotels should book none, and one whose tools read live data
should answer the same each time. Here every call of the sample travel agent is answered by
samples/data/travel_mocks.yaml (per tool, by argument), through google-adk's own tool callback:
a call the file does not answer fails its case, naming the tool and its arguments. The agent's
summary lists each call, mocked or run. The agent's model is Gemini: without GOOGLE_API_KEY (or
GOOGLE_GENAI_USE_VERTEXAI with Application Default Credentials) the sample says so and stops.
"""

import argparse
import logging
import os
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.results import fetch_results

SAMPLES = Path(__file__).resolve().parent
# ADK's criteria on the emulator; the service's own metrics for a project.
CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}
SERVICE_CONFIG = {"criteria": {"trajectory_exact_match": 1.0, "rouge_1": 0.8}}

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument(
    "--mocks",
    default=str(SAMPLES / "data" / "travel_mocks.yaml"),
    help="a mock file, golden (the cases' expected tool responses) or sessions:DIR",
)
args = parser.parse_args()
# google-adk logs each failure of the agent with its traceback; the results say why, once.
logging.getLogger("google_adk").setLevel(logging.CRITICAL)

if not (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")):
    print(
        "the agent's model is Gemini and no credentials are set: set GOOGLE_API_KEY (or "
        "GOOGLE_GENAI_USE_VERTEXAI=true with Application Default Credentials) to run it"
    )
    raise SystemExit(0)

with connect(args.project, args.location) as target:
    evaluation = jobs.evaluate(
        target.client,
        str(SAMPLES / "agent" / "travel.evalset.json"),
        agent=str(SAMPLES / "agent" / "travel_agent"),
        config=CONFIG if target.computes_locally else SERVICE_CONFIG,
        mock_tools=args.mocks,
        poll_interval=target.poll_interval,
    )
    print(evaluation.agent_runs.summary())
    results = fetch_results(
        target.client, evaluation.run, thresholds=evaluation.thresholds, items=evaluation.results
    )
    print(results.to_table())
