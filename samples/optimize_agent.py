"""Look for a better instruction for an ADK agent, accepted only when it is better beyond noise.

    GOOGLE_API_KEY=... python samples/optimize_agent.py                  # the sample travel agent
    python samples/optimize_agent.py --agent my_agent/ --evalset my.evalset.json --budget 4

google-adk's GEPA proposes instructions through a reflection model (Gemini) that reads the
cases as they ran; every candidate runs on the training cases and is scored here with ADK's
trajectory and response criteria; what GEPA found is then set beside the original on held-out
cases by a paired comparison, and written only when it improved beyond noise. The output
folder holds instruction.txt (the accepted one, else the original), optimize.json and
optimize.html. The agent's model is Gemini: without GOOGLE_API_KEY (or
GOOGLE_GENAI_USE_VERTEXAI with Application Default Credentials) the sample says so and stops.
"""

import argparse
import asyncio
import logging
import os
import tempfile
from pathlib import Path

from platform_eval.formats import load_eval_set
from platform_eval.jobs.optimize import optimize, write_report
from platform_eval.metrics import DEFAULT_JUDGES

HERE = Path(__file__).resolve().parent / "agent"
METRICS = ["tool_trajectory_avg_score", "response_match_score"]

parser = argparse.ArgumentParser(description="optimize an ADK agent's instruction")
parser.add_argument("--project", help="unused: the candidates are scored on this machine")
parser.add_argument("--agent", default=str(HERE / "travel_agent"), help="agent folder")
parser.add_argument("--evalset", default=str(HERE / "travel.evalset.json"))
parser.add_argument("--budget", type=int, default=1, help="instructions to propose")
parser.add_argument("--output", default=None, help="folder for instruction.txt and the report")
args = parser.parse_args()
logging.getLogger("google_adk").setLevel(logging.CRITICAL)

if not (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")):
    print(
        "the agent's model is Gemini and no credentials are set: set GOOGLE_API_KEY (or "
        "GOOGLE_GENAI_USE_VERTEXAI=true with Application Default Credentials) to run it"
    )
    raise SystemExit(0)

output = Path(args.output or tempfile.mkdtemp(prefix="optimize-"))
report = asyncio.run(
    optimize(
        args.agent,
        load_eval_set(args.evalset).eval_cases,
        METRICS,
        judges=DEFAULT_JUDGES,
        budget=args.budget,
        run_dir=output / "gepa-state",
    )
)
for path in write_report(report, output):
    print(f"wrote {path}")
print(report.decision)
print(f"{report.split}; the statistic: {report.test.verdict}")
