"""Evaluate an agent where it runs: a served ADK agent (Cloud Run, `adk api_server`, ADK in Java,
Go or TypeScript) or an Agent Runtime, through its API, scored as an agent run here is.

    GOOGLE_API_KEY=... python samples/evaluate_served_agent.py     # serves the sample agent first
    python samples/evaluate_served_agent.py --url https://my-agent-abc123-uc.a.run.app \\
        --evalset my.evalset.json --header "Authorization: Bearer $TOKEN"
    python samples/evaluate_served_agent.py \\
        --url projects/my-project/locations/us-central1/reasoningEngines/123

Without --url the sample agent (samples/agent/travel_agent) is served on this machine by
google-adk's own api_server, as `adk api_server` serves it, and evaluated through that URL: per
case a session is made through the API, each user turn sent, and the session read back; its
events and state are the candidate. The sample agent's model is Gemini: without GOOGLE_API_KEY
(or GOOGLE_GENAI_USE_VERTEXAI with Application Default Credentials) the sample says so and stops.
"""

import argparse
import contextlib
import logging
import os
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.agents.remote import ServedAgent, parse_headers
from platform_eval.results import fetch_results

HERE = Path(__file__).resolve().parent / "agent"
# ADK's criteria on the emulator; the service's own metrics for a project.
CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}
SERVICE_CONFIG = {"criteria": {"trajectory_exact_match": 1.0, "rouge_1": 0.8}}

parser = argparse.ArgumentParser(description="evaluate a served agent through its API")
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--url", help="the agent's URL or Agent Runtime (default: serve the sample)")
parser.add_argument("--app-name", help="the app, when the server serves several")
parser.add_argument("--header", action="append", default=[], help="'Name: value', repeatable")
parser.add_argument("--evalset", default=str(HERE / "travel.evalset.json"))
args = parser.parse_args()
logging.getLogger("google_adk").setLevel(logging.CRITICAL)


@contextlib.contextmanager
def served_sample() -> Iterator[str]:
    """The sample agent served by google-adk's api_server on a free loopback port."""
    import uvicorn

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # google-adk's experimental notices
        from google.adk.cli.fast_api import get_fast_api_app

        app = get_fast_api_app(agents_dir=str(HERE), web=False, use_local_storage=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


if args.url is None and not (
    os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")
):
    print(
        "the sample agent's model is Gemini and no credentials are set: set GOOGLE_API_KEY (or "
        "GOOGLE_GENAI_USE_VERTEXAI=true with Application Default Credentials), or pass --url"
    )
    raise SystemExit(0)

with contextlib.ExitStack() as stack:
    url = args.url or stack.enter_context(served_sample())
    agent = ServedAgent(url, app_name=args.app_name, headers=parse_headers(args.header))
    target = stack.enter_context(connect(args.project, args.location))
    evaluation = jobs.evaluate(
        target.client,
        args.evalset,
        agent=agent,
        config=CONFIG if target.computes_locally else SERVICE_CONFIG,
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
