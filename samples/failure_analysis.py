"""Write test scenarios for an agent, run the agent on them, and cluster how it failed.

    GOOGLE_API_KEY=... python samples/failure_analysis.py --judge-model gemini-2.5-flash
    python samples/failure_analysis.py --agent my_agent/ --count 20 --project my-project

The scenarios (a first message and a plan for a simulated user) are written by the judge model
from what the agent is: its instruction, tools and sub-agents (``:generateUserScenarios``). The
agent plays each one through google-adk's Runner and user simulator; the conversations are
scored by a rubric metric, and the failed rubrics grouped into a taxonomy of failures
(``:generateLossClusters``). On the emulator every model call goes through the judge (its
cache answers the same question again); with --project the service writes and clusters. The
agent's model and the judge are Gemini: without GOOGLE_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI
with Application Default Credentials) the sample says so and stops.
"""

import argparse
import asyncio
import json
import logging
import os
import tempfile
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.agents import load_agent
from platform_eval.agents.describe import agent_configs
from platform_eval.judges import JudgeSettings
from platform_eval.results.loss import analyze

HERE = Path(__file__).resolve().parent / "agent"
METRIC = "multi_turn_task_success_v1"

parser = argparse.ArgumentParser(description="synthesize scenarios, run the agent, analyze")
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--agent", default=str(HERE / "travel_agent"), help="agent folder")
parser.add_argument("--count", type=int, default=4, help="scenarios to write")
parser.add_argument("--judge-model", help="the emulator's judge (or PLATFORM_EVAL_JUDGE_MODEL)")
args = parser.parse_args()
logging.getLogger("google_adk").setLevel(logging.CRITICAL)

if not (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")):
    print(
        "the agent's model and the judge are Gemini and no credentials are set: set "
        "GOOGLE_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI=true with Application Default "
        "Credentials) to run it"
    )
    raise SystemExit(0)

judges = JudgeSettings.resolve(db=None, model=args.judge_model or "gemini-2.5-flash").judges()
work = Path(tempfile.mkdtemp(prefix="synth-"))
with connect(args.project, args.location, db=None, judges=judges) as target:
    client = target.client
    # 1. Scenarios written for the agent, as an EvaluationDataset run --agent reads.
    agents, root = agent_configs(asyncio.run(load_agent(args.agent)).root_agent)
    written = client.generate_user_scenarios(
        {
            "agents": {name: agent.to_wire() for name, agent in agents.items()},
            "rootAgentId": root,
            "userScenarioGenerationConfig": {"userScenarioCount": args.count},
        }
    )
    cases = [
        {
            "eval_case_id": f"scenario-{n}",
            "user_scenario": scenario.model_dump(exclude_none=True, exclude={"test_case_title"}),
        }
        for n, scenario in enumerate(written.user_scenarios or [], 1)
    ]
    dataset = work / "synth-dataset.json"
    dataset.write_text(json.dumps({"eval_cases": cases}, indent=2))
    print(f"{len(cases)} scenarios written to {dataset}")

    # 2. The agent plays each scenario; a rubric metric scores the conversations.
    evaluation = jobs.evaluate(
        client,
        dataset,
        agent=args.agent,
        metrics=[METRIC],
        poll_interval=target.poll_interval,
    )
    print(evaluation.agent_runs.summary())

    # 3. The failed rubrics, clustered.
    report = analyze(client, evaluation.run, metric=METRIC)
    print(report.to_table(), end="")
