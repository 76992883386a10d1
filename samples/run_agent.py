"""Run an ADK agent on an eval set as `adk eval` does, several times a case, and score it.

    GOOGLE_API_KEY=... python samples/run_agent.py                  # the sample travel agent
    python samples/run_agent.py --agent my_agent/ --evalset my.evalset.json --num-runs 3
    python samples/run_agent.py --project my-project                # scored by the service

Each case's conversation goes through google-adk's Runner (a `conversation_scenario` case
through ADK's user simulator); the finished sessions are the candidates, scored with ADK's
trajectory and response criteria. With --num-runs N each case has N candidates, and the table
ends with each case's mean and spread: how much the agent varies from run to run, pass@k and
pass^k for k = 1..N and the flaky cases (runs that disagree), then what the runs cost and took
(model calls, tokens, cost at list prices, latency p50 and p95). The sessions
are kept in a folder, so that `platform-eval run EVALSET --traces FOLDER` scores them again
without running the agent. The sample agent's model is Gemini: without GOOGLE_API_KEY (or
GOOGLE_GENAI_USE_VERTEXAI with Application Default Credentials) the sample says so and stops.
"""

import argparse
import logging
import os
import tempfile
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.results import fetch_results

HERE = Path(__file__).resolve().parent / "agent"
# ADK's criteria on the emulator; the service's own metrics for a project.
CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}
SERVICE_CONFIG = {"criteria": {"trajectory_exact_match": 1.0, "rouge_1": 0.8}}

parser = argparse.ArgumentParser(description="run an ADK agent on an eval set and score it")
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--agent", default=str(HERE / "travel_agent"), help="agent folder")
parser.add_argument("--evalset", default=str(HERE / "travel.evalset.json"))
parser.add_argument("--num-runs", type=int, default=2)
args = parser.parse_args()
# google-adk logs each failure of the agent with its traceback; the results say why, once.
logging.getLogger("google_adk").setLevel(logging.CRITICAL)

if not (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")):
    print(
        "the agent's model is Gemini and no credentials are set: set GOOGLE_API_KEY (or "
        "GOOGLE_GENAI_USE_VERTEXAI=true with Application Default Credentials) to run it"
    )
    raise SystemExit(0)

sessions = Path(tempfile.mkdtemp(prefix="sessions-"))
with connect(args.project, args.location) as target:
    try:
        evaluation = jobs.evaluate(
            target.client,
            args.evalset,
            agent=args.agent,
            num_runs=args.num_runs,
            config=CONFIG if target.computes_locally else SERVICE_CONFIG,
            save_sessions=sessions,
            poll_interval=target.poll_interval,
        )
    except jobs.NothingToEvaluateError as exc:
        print(f"nothing was evaluated: {exc}")
        raise SystemExit(0) from None
    print(evaluation.agent_runs.summary())
    results = fetch_results(
        target.client, evaluation.run, thresholds=evaluation.thresholds, items=evaluation.results
    )
    print(results.to_table())
    print(f"sessions kept in {sessions}: platform-eval run {args.evalset} --traces {sessions}")
