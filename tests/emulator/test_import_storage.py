"""An imported item is stored as a created one is: ``evaluationSets:import`` writes each item
and its payload with pydantic-core straight from the model, and that text must be what the rest
of the emulator writes (``store.encode`` of ``to_wire()``), for every shape an item takes."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
from conftest import RUN_SLOW
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from platform_eval import Client
from platform_eval import types as t
from platform_eval.emulator import Emulator
from platform_eval.emulator.store import encode, encode_model

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
_json_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_parts = st.one_of(
    st.fixed_dictionaries({"text": st.text(max_size=20)}, optional={"thought": st.booleans()}),
    st.fixed_dictionaries(
        {
            "functionCall": st.fixed_dictionaries(
                {"name": st.text(min_size=1, max_size=8)},
                optional={"args": st.dictionaries(st.text(max_size=4), _json_values, max_size=2)},
            )
        }
    ),
    st.fixed_dictionaries(
        {
            "functionResponse": st.fixed_dictionaries(
                {"name": st.just("f"), "response": st.dictionaries(st.text(max_size=4), _scalars)}
            )
        }
    ),
    st.builds(
        lambda data: {
            "inlineData": {"mimeType": "image/png", "data": base64.b64encode(data).decode()}
        },
        st.binary(max_size=12),
    ),
)
_contents = st.fixed_dictionaries(
    {"parts": st.lists(_parts, min_size=1, max_size=3)},
    optional={"role": st.sampled_from(["user", "model"])},
)
_events = st.fixed_dictionaries(
    {"author": st.sampled_from(["user", "agent"]), "content": _contents},
    optional={"eventTime": st.just("2026-11-26T10:00:00.123Z")},
)
_agent_data = st.fixed_dictionaries(
    {
        "turns": st.lists(
            st.fixed_dictionaries(
                {"turnIndex": st.integers(0, 3), "events": st.lists(_events, max_size=3)}
            ),
            max_size=3,
        )
    }
)
_candidates = st.lists(
    st.one_of(
        st.fixed_dictionaries({"candidate": st.just("agent"), "agentData": _agent_data}),
        st.fixed_dictionaries({"candidate": st.just("model"), "text": st.text(max_size=20)}),
        st.fixed_dictionaries(
            {
                "candidate": st.just("value"),
                "value": st.dictionaries(st.text(max_size=4), _json_values),
            }
        ),
    ),
    max_size=2,
)


@st.composite
def _items(draw: st.DrawFn) -> dict[str, Any]:
    request: dict[str, Any] = {
        "prompt": draw(
            st.one_of(
                st.fixed_dictionaries({"text": st.text(max_size=20)}),
                st.fixed_dictionaries({"agentData": _agent_data}),
            )
        ),
        "candidateResponses": draw(_candidates),
    }
    if draw(st.booleans()):
        request["goldenResponse"] = {"text": draw(st.text(max_size=20))}
    item: dict[str, Any] = {
        "displayName": draw(st.text(min_size=1, max_size=10)),
        "evaluationItemType": "REQUEST",
        "evaluationRequest": request,
    }
    if draw(st.booleans()):
        item["labels"] = draw(st.dictionaries(st.text("abc", min_size=1), st.text("xyz")))
    if draw(st.booleans()):
        item["metadata"] = draw(st.dictionaries(st.text(max_size=5), _json_values, max_size=3))
    return item


@settings(
    max_examples=300 if RUN_SLOW else 60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(item=_items())
def test_an_item_and_its_payload_are_written_as_the_store_writes_them(
    item: dict[str, Any],
) -> None:
    model = t.EvaluationItem.model_validate(item)
    assert encode_model(model) == encode(model.to_wire())
    assert model.evaluation_request is not None
    request = model.evaluation_request
    assert encode_model(request) == encode(request.to_wire())


def test_an_imported_item_reads_back_as_the_one_created(emulator: Emulator) -> None:
    """Through the API: the item a create stores and the one an import stores (its payload in
    Cloud Storage) give the same request."""
    project = "import-storage"
    line = {
        "displayName": "café ☕",
        "evaluationItemType": "REQUEST",
        "labels": {"team": "eval"},
        "evaluationRequest": {
            "prompt": {"text": "weather?"},
            "candidateResponses": [
                {
                    "candidate": "agent",
                    "agentData": {
                        "turns": [
                            {
                                "turnIndex": 0,
                                "events": [
                                    {
                                        "author": "agent",
                                        "content": {
                                            "role": "model",
                                            "parts": [
                                                {"functionCall": {"name": "f", "args": {"x": 1.5}}},
                                                {"inlineData": {"mimeType": "a/b", "data": "AAE="}},
                                            ],
                                        },
                                    }
                                ],
                            }
                        ]
                    },
                }
            ],
        },
    }
    with Client(project, api_endpoint=emulator.url) as client:
        created = client.create_item(line)
        operation = httpx.post(
            f"{emulator.url}/v1beta1/{client.parent}/evaluationSets:import",
            json={
                "evaluationSet": {"displayName": "s"},
                "gcsDestination": {"outputUriPrefix": f"gs://{project}-imports/p/"},
                "inlineSource": {
                    "content": base64.b64encode(json.dumps(line).encode()).decode(),
                    "importSchemaConfig": {"dataFormat": "JSONL"},
                },
            },
        ).json()
        assert "error" not in operation, operation
        (name,) = operation["response"]["evaluationItems"]
        imported = client.get_item(name)
        assert imported.gcs_uri and imported.gcs_uri.startswith(f"gs://{project}-imports/p/")
        bucket, _, object_name = imported.gcs_uri.removeprefix("gs://").partition("/")
        payload = httpx.get(
            f"{emulator.url}/download/storage/v1/b/{bucket}/o/{object_name.replace('/', '%2F')}",
            params={"alt": "media"},
        )
        payload.raise_for_status()
        assert created.evaluation_request is not None
        assert payload.json() == created.evaluation_request.to_wire()
        assert imported.display_name == created.display_name
        assert imported.labels == created.labels
