"""Our wire JSON against the official proto-plus messages of google-cloud-aiplatform."""

from __future__ import annotations

import json

import pytest
from google.protobuf import json_format

from platform_eval import types as t

aip = pytest.importorskip("google.cloud.aiplatform_v1beta1.types")

AGENT_DATA = {
    "agents": {
        "weather_agent": {
            "agentId": "weather_agent",
            "agentType": "LlmAgent",
            "description": "Answers weather questions",
            "instruction": "Be brief. User: {user_name}",
            "tools": [
                {
                    "functionDeclarations": [
                        {
                            "name": "get_weather",
                            "description": "Weather for a city",
                            "parameters": {
                                "type": "OBJECT",
                                "properties": {"city": {"type": "STRING"}},
                                "required": ["city"],
                            },
                        }
                    ]
                }
            ],
            "subAgents": ["forecast_agent"],
        }
    },
    "turns": [
        {
            "turnIndex": 0,
            "turnId": "inv-1",
            "events": [
                {
                    "author": "user",
                    "content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                    "eventTime": "2026-10-02T15:01:23.045123Z",
                },
                {
                    "author": "weather_agent",
                    "content": {
                        "role": "model",
                        "parts": [
                            {
                                "functionCall": {
                                    "name": "get_weather",
                                    "args": {"city": "Paris", "days": 2},
                                }
                            }
                        ],
                    },
                    "stateDelta": {"last_city": "Paris", "count": 1},
                },
                {
                    "author": "weather_agent",
                    "content": {
                        "role": "user",
                        "parts": [
                            {
                                "functionResponse": {
                                    "name": "get_weather",
                                    "response": {"temp": 21.5},
                                }
                            }
                        ],
                    },
                },
                {
                    "author": "weather_agent",
                    "content": {"role": "model", "parts": [{"text": "Sunny, 21.5 C."}]},
                },
            ],
        }
    ],
}

RUBRIC = {
    "rubricId": "r1",
    "content": {"property": {"description": "Mentions the temperature"}},
    "type": "TEXT_CONTAINS",
    "importance": "HIGH",
}

RUBRIC_GROUP = {"groupId": "quality", "displayName": "Quality v1", "rubrics": [RUBRIC]}

VERDICT = {"evaluatedRubric": RUBRIC, "verdict": True, "reasoning": "It says 21.5 C."}


def proto_json(cls, proto) -> dict:  # type: ignore[no-untyped-def]
    return json_format.MessageToDict(cls.pb(proto))


CASES = [
    (t.AgentData, aip.AgentData, AGENT_DATA),
    (t.Rubric, aip.Rubric, RUBRIC),
    (t.RubricGroup, aip.RubricGroup, RUBRIC_GROUP),
    (t.RubricVerdict, aip.RubricVerdict, VERDICT),
]


@pytest.mark.parametrize(
    ("ours", "theirs", "payload"), CASES, ids=lambda c: getattr(c, "__name__", "")
)
def test_our_json_parses_with_the_official_protos(ours, theirs, payload) -> None:  # type: ignore[no-untyped-def]
    wire = ours.model_validate(payload).to_wire()
    proto = theirs.from_json(json.dumps(wire), ignore_unknown_fields=False)
    back = proto_json(theirs, proto)
    assert ours.model_validate(back) == ours.model_validate(payload)


@pytest.mark.parametrize(
    ("ours", "theirs", "payload"), CASES, ids=lambda c: getattr(c, "__name__", "")
)
def test_official_proto_json_parses_into_ours_and_compares_equal(ours, theirs, payload) -> None:  # type: ignore[no-untyped-def]
    proto = theirs.from_json(json.dumps(payload), ignore_unknown_fields=False)
    # Canonical proto3 JSON (json_name, camelCase). The snake_case spelling is not checked
    # against these descriptors: proto-plus renames fields like `type` to `type_` in them.
    parsed = ours.model_validate(proto_json(theirs, proto))
    assert parsed == ours.model_validate(payload)
    # And what we write back is what they read.
    assert theirs.from_json(json.dumps(parsed.to_wire()), ignore_unknown_fields=False) == proto


def test_enum_numbers_from_proto_json_are_accepted() -> None:
    proto = aip.Rubric.from_json(json.dumps(RUBRIC))
    numbered = json_format.MessageToDict(aip.Rubric.pb(proto), use_integers_for_enums=True)
    assert t.Rubric.model_validate(numbered).importance == t.Importance.HIGH
