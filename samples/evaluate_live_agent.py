"""Evaluate a voice agent live: each case one live (bidi) conversation, as ADK's /run_live holds
it, the agent answering in speech; its transcript scored, its audio kept, and the time to its
first and last audio per turn reported and gated.

    GOOGLE_API_KEY=... python samples/evaluate_live_agent.py            # the sample voice agent
    python samples/evaluate_live_agent.py --agent http://localhost:8000 --app-name my_voice_agent

Without --agent the sample voice agent (samples/voice/voice_agent, on a Gemini Live model) runs
in this process through google-adk's Runner.run_live; --agent URL plays the cases on a served
agent's /run_live WebSocket (adk api_server, adk web, Cloud Run). The agent's audio of each turn
is written to --sessions (default ./live-sessions) beside each session. Without GOOGLE_API_KEY
(or GOOGLE_GENAI_USE_VERTEXAI with Application Default Credentials) the sample says so and stops.
"""

import argparse
import logging
import os
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.agents.remote import ServedAgent, is_agent_url
from platform_eval.results import fetch_results

HERE = Path(__file__).resolve().parent / "voice"
CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}
SERVICE_CONFIG = {"criteria": {"trajectory_exact_match": 1.0, "rouge_1": 0.8}}

parser = argparse.ArgumentParser(description="evaluate a voice agent in live mode")
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--agent", default=str(HERE / "voice_agent"), help="folder or served URL")
parser.add_argument("--app-name", help="with a URL: the app, when the server serves several")
parser.add_argument("--evalset", default=str(HERE / "voice.evalset.json"))
parser.add_argument("--sessions", default="live-sessions", help="where sessions and audio go")
parser.add_argument("--first-audio-p95", type=float, default=3.0, help="seconds, the gate")
args = parser.parse_args()
logging.getLogger("google_adk").setLevel(logging.CRITICAL)

served = is_agent_url(args.agent)
if not served and not (
    os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")
):
    print(
        "the sample voice agent's model is Gemini Live and no credentials are set: set "
        "GOOGLE_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI=true with Application Default "
        "Credentials), or pass --agent URL"
    )
    raise SystemExit(0)

agent = ServedAgent(args.agent, app_name=args.app_name) if served else args.agent
with connect(args.project, args.location) as target:
    evaluation = jobs.evaluate(
        target.client,
        args.evalset,
        agent=agent,
        agent_mode="live",
        config=CONFIG if target.computes_locally else SERVICE_CONFIG,
        thresholds={"first_audio_p95_s": args.first_audio_p95},
        save_sessions=args.sessions,
        poll_interval=target.poll_interval,
        resume=False,
    )
    assert evaluation.agent_runs is not None
    print(evaluation.agent_runs.summary())
    results = fetch_results(
        target.client,
        evaluation.run,
        thresholds=evaluation.thresholds,
        items=evaluation.results,
        case_ids=evaluation.upload.case_ids,
    )
    print(results.to_table())
    usage = results.usage()
    if usage is not None:
        for case in usage.per_case():
            first = ", ".join(f"{s:.2f}" for s in case.get("firstAudioSeconds") or [])
            print(f"{case['evalCaseId']}: first audio per turn (s): {first}")
    audio = sorted(p.name for p in Path(args.sessions).glob("*.wav"))
    print(f"the agent's audio: {len(audio)} files in {args.sessions}/")
    print("PASSED" if results.passed else "FAILED")
