"""ADK's judged criteria with a judge model: scores, rubric verdicts, what it cost, and the cache.

    PLATFORM_EVAL_JUDGE_MODEL=gemini-2.5-flash GOOGLE_API_KEY=... python samples/judged_eval.py
    python samples/judged_eval.py --judge-model gemini-2.5-flash   # the same
    python samples/judged_eval.py                                    # no judge: refused
    python samples/judged_eval.py --project my-project               # the service's own metrics

Scores the sample conversation with `final_response_match_v2` and a free-text rubric through
google-adk's own evaluators, judged by the model (Gemini through google-genai, or a LiteLLM
`provider/model`), then evaluates again: the second time every answer comes from the replay
cache and no model is called. Without a judge model the judged metrics are refused before
anything is uploaded, saying why: no score is ever made up.
"""

import argparse
import json
import os
import tempfile
from pathlib import Path

from platform_eval import connect, errors, jobs
from platform_eval.judges import JudgeSettings, usage_report
from platform_eval.results import fetch_results

DATA = Path(__file__).resolve().parent / "data"
CONFIG = {
    "criteria": {
        "final_response_match_v2": {
            "threshold": 0.6,
            "judge_model_options": {"num_samples": 3},
        },
        "rubric_based_final_response_quality_v1": {
            "threshold": 0.8,
            "judge_model_options": {"num_samples": 1},
            "rubrics": [
                {
                    "rubric_id": "states_the_weather",
                    "rubric_content": {"text_property": "The answer says what the weather is."},
                }
            ],
        },
    }
}
# The service judges its own rubric metrics.
SERVICE_METRICS = ["final_response_quality_v1"]

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--project", help="Google Cloud project (default: the embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--judge-model", help="default: PLATFORM_EVAL_JUDGE_MODEL")
args = parser.parse_args()

workdir = Path(tempfile.mkdtemp())
settings = JudgeSettings.resolve(model=args.judge_model, cache=workdir / "judge-cache.sqlite")
if settings.model is None:
    print("No judge model: set PLATFORM_EVAL_JUDGE_MODEL or pass --judge-model. The emulator")
    print("refuses the judged metrics without one, saying why.\n")
config = {
    "criteria": {
        name: {
            **criterion,
            "judge_model_options": {
                **criterion["judge_model_options"],
                "judge_model": settings.model or "gemini-2.5-flash",
            },
        }
        for name, criterion in CONFIG["criteria"].items()
    }
}
config_file = workdir / "eval_config.json"
config_file.write_text(json.dumps(config))

for attempt in ("first run", "the same run again"):
    judges = settings.judges()
    with connect(
        args.project, args.location, db=workdir / "emulator.sqlite", judges=judges
    ) as target:
        local = target.computes_locally
        try:
            evaluation = jobs.evaluate(
                target.client,
                DATA / "weather.evalset.json",
                traces=[DATA / "weather_traces.otlp.json"],
                config=config_file if local else None,
                metrics=None if local else SERVICE_METRICS,
                manifest=workdir / f"manifest-{os.getpid()}.jsonl",
                poll_interval=target.poll_interval,
            )
        except jobs.MetricsRefusedError as refused:
            # Asked before anything is uploaded: no judge, no score, and nothing sent.
            print(f"the target refuses the metrics, nothing was uploaded: {refused}")
            judges.close()
            break
        except errors.InvalidArgument as refused:
            # The service refuses a run it cannot compute when the run is created.
            print(f"the target refuses the run: {refused.message}")
            judges.close()
            break
        results = fetch_results(
            target.client,
            evaluation.run,
            thresholds=evaluation.thresholds,
            items=evaluation.results,
        )
    results.judge = usage_report(judges)
    print(f"== {attempt}")
    print(results.to_table(rubrics=True))
    judges.close()
    if results.judge is None or not local:
        break
