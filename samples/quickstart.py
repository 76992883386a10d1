"""Quick start: an item with an AgentData candidate, a set, a run, the scores. Offline."""

from platform_eval.emulator import Emulator

with Emulator() as emu, emu.client() as client:
    turn = [{"author": "user", "content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]}},
            {"author": "weather_agent", "content": {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]}},
            {"author": "weather_agent", "content": {"role": "model", "parts": [{"text": "Sunny in Paris today."}]}}]
    item = client.create_item({"displayName": "weather", "evaluationItemType": "REQUEST", "evaluationRequest": {
        "prompt": {"text": "Weather in Paris?"}, "goldenResponse": {"text": "It is sunny in Paris."},
        "rubrics": {"quality": {"groupId": "quality", "rubrics": [{"rubricId": "r1", "type": "TEXT_CONTAINS", "content": {"property": {"description": "Paris"}}}]}},
        "candidateResponses": [{"candidate": "weather_agent", "agentData": {"turns": [{"turnIndex": 0, "events": turn}]}}]}})
    run = client.create_run(evaluation_set=client.create_set(display_name="golden", items=[item]),
                            metrics=["exact_match", "response_match_score", "tool_trajectory_avg_score", "rubric_based_final_response_quality_v1"])
    for result in client.get_results(client.wait_for_run(run, poll_interval=0.1)):
        for score in result.evaluation_response.candidate_results:
            print(score.candidate, score.metric, score.score)
