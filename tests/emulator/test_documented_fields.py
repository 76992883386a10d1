"""Fields of the discovery documents that live in google-genai's messages (a tool's kinds,
grounding types, an external API's search parameters) or in empty messages (a metric's
``exactMatchSpec``, ``languageAuto``): each is taken where the document puts it, by our client
and by the emulator, in both versions, and read back as sent (issue 51, item 23)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_eval import Client
from platform_eval.emulator import Emulator

#: One tool of each documented kind the issue named, as the wire spells them.
TOOLS: list[dict[str, Any]] = [
    {"codeExecution": {}},
    {"urlContext": {}},
    {"googleSearch": {"searchTypes": {"webSearch": {}, "imageSearch": {}}}},
    {"googleMaps": {"groundingTypes": {"places": {}, "routing": {}}}},
    {"retrieval": {"externalApi": {"simpleSearchParams": {}}}},
]


@pytest.mark.parametrize("version", ["v1beta1", "v1"])
def test_the_fields_google_genai_holds_round_trip(
    emulator: Emulator, project: str, version: str
) -> None:
    agent_data = {
        "agents": {"helper": {"agentId": "helper", "tools": TOOLS}},
        "turns": [
            {
                "turnIndex": 0,
                "events": [
                    {"author": "user", "content": {"role": "user", "parts": [{"text": "hi"}]}}
                ],
            }
        ],
    }
    with Client(project, api_endpoint=emulator.url, api_version=version) as client:
        item = client.create_item(
            {
                "displayName": "tools",
                "evaluationItemType": "REQUEST",
                "evaluationRequest": {"prompt": {"agentData": agent_data}},
            }
        )
        back = client.get_item(item.name).model_dump(mode="json", by_alias=True, exclude_none=True)
    assert back["evaluationRequest"]["prompt"]["agentData"]["agents"]["helper"]["tools"] == TOOLS


@pytest.mark.parametrize("version", ["v1beta1", "v1"])
def test_empty_messages_of_the_documents_round_trip(
    emulator: Emulator, project: str, version: str
) -> None:
    judge = {"generationConfig": {"audioTranscriptionConfig": {"languageAuto": {}}}}
    metric = {
        "llmBasedMetricSpec": {
            "metricPromptTemplate": "Rate {response}",
            "judgeAutoraterConfig": judge,
        }
    }
    with Client(project, api_endpoint=emulator.url, api_version=version) as client:
        created = client.create_metric({"displayName": "rated", "metric": metric})
        back = client.get_metric(created.name).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        item = client.create_item(
            {
                "displayName": "q",
                "evaluationItemType": "REQUEST",
                "evaluationRequest": {
                    "prompt": {"text": "q"},
                    "candidateResponses": [{"candidate": "c", "text": "a"}],
                },
            }
        )
        run = client.create_run(
            evaluation_set=client.create_set(display_name="s", items=[item]),
            metrics=[{"metric": "exact_match", "metricConfig": {"exactMatchSpec": {}}}],
        )
        sent = client.get_run(run.name).model_dump(mode="json", by_alias=True, exclude_none=True)
    assert back["metric"]["llmBasedMetricSpec"]["judgeAutoraterConfig"] == judge
    (run_metric,) = sent["evaluationConfig"]["metrics"]
    assert run_metric["metricConfig"] == {"exactMatchSpec": {}}
