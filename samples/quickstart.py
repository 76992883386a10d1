"""Quick start: an item with an AgentData candidate, a set, a run, the scores.

    python samples/quickstart.py                        # an embedded emulator, no cloud needed
    python samples/quickstart.py --project my-project   # the real service
"""

import argparse

from platform_eval import connect

parser = argparse.ArgumentParser(description="an item, a set, a run, the scores")
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
args = parser.parse_args()

with connect(args.project, args.location) as target:
    client = target.client
    turn = [{"author": "user", "content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]}},
            {"author": "weather_agent", "content": {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]}},
            {"author": "weather_agent", "content": {"role": "model", "parts": [{"text": "Sunny in Paris today."}]}}]
    item = client.create_item({"displayName": "weather", "evaluationItemType": "REQUEST", "evaluationRequest": {
        "prompt": {"text": "Weather in Paris?"}, "goldenResponse": {"text": "It is sunny in Paris."},
        "rubrics": {"quality": {"groupId": "quality", "rubrics": [{"rubricId": "r1", "type": "TEXT_CONTAINS", "content": {"property": {"description": "Paris"}}}]}},
        "candidateResponses": [{"candidate": "weather_agent", "agentData": {"turns": [{"turnIndex": 0, "events": turn}]}}]}})
    run = client.create_run(evaluation_set=client.create_set(display_name="golden", items=[item]),
                            metrics=["exact_match", "rouge_1", "tool_call_valid", "final_response_quality_v1"])
    for result in client.get_results(client.wait_for_run(run, poll_interval=target.poll_interval)):
        for score in result.evaluation_response.candidate_results:
            print(score.candidate, score.metric, score.score)
