"""Offline evaluation of recorded traces against a golden eval set, on the local emulator.

Writes a small ADK eval set and an ADK session export to a temporary folder (in your project
they would be tests/eval/evalsets/*.evalset.json and your recorded sessions), then uploads the
eval set with the session as the candidate, runs two metrics and prints the scores.
"""

import json
import tempfile
from pathlib import Path

from platform_eval import jobs
from platform_eval.emulator import Emulator

folder = Path(tempfile.mkdtemp())
(folder / "weather.evalset.json").write_text(
    json.dumps(
        {
            "eval_set_id": "weather",
            "eval_cases": [
                {
                    "eval_id": "paris",
                    "conversation": [
                        {
                            "invocation_id": "inv-1",
                            "user_content": {
                                "role": "user",
                                "parts": [{"text": "What's the weather in Paris?"}],
                            },
                            "final_response": {
                                "role": "model",
                                "parts": [{"text": "It is sunny in Paris."}],
                            },
                            "intermediate_data": {
                                "tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]
                            },
                        }
                    ],
                }
            ],
        }
    )
)
(folder / "session.json").write_text(
    json.dumps(
        {
            "id": "session-1",
            "app_name": "weather_agent",
            "user_id": "u1",
            "state": {},
            "events": [
                {
                    "invocation_id": "e-1",
                    "author": "user",
                    "timestamp": 1767225600.0,
                    "content": {
                        "role": "user",
                        "parts": [{"text": "What's the weather in Paris?"}],
                    },
                },
                {
                    "invocation_id": "e-1",
                    "author": "weather_agent",
                    "timestamp": 1767225601.0,
                    "content": {
                        "role": "model",
                        "parts": [
                            {"function_call": {"name": "get_weather", "args": {"city": "Paris"}}}
                        ],
                    },
                },
                {
                    "invocation_id": "e-1",
                    "author": "weather_agent",
                    "timestamp": 1767225602.0,
                    "content": {
                        "role": "user",
                        "parts": [
                            {
                                "function_response": {
                                    "name": "get_weather",
                                    "response": {"sky": "clear"},
                                }
                            }
                        ],
                    },
                },
                {
                    "invocation_id": "e-1",
                    "author": "weather_agent",
                    "timestamp": 1767225603.0,
                    "content": {"role": "model", "parts": [{"text": "It's sunny in Paris today."}]},
                },
            ],
        }
    )
)

with Emulator() as emulator, emulator.client() as client:
    outcome = jobs.evaluate(
        client,
        folder / "weather.evalset.json",
        traces=[folder / "session.json"],
        metrics=["tool_trajectory_avg_score", "response_match_score"],
        manifest=folder / "manifest.jsonl",
        poll_interval=0.1,
    )
    print(f"run {outcome.run.state}: {outcome.upload.matches.summary()}")  # "1 matched"
    for result in outcome.results:
        for score in result.evaluation_response.candidate_results:
            print(f"{score.candidate} {score.metric} {score.score:.3f}")
