"""The emulator's route table is the discovery documents' methods: every method of v1beta1,
nothing else; v1 the same less what only v1beta1 has. A path or verb outside it is NOT_FOUND
naming it, and a v1 request is checked against v1 wherever it carries a resource."""

from __future__ import annotations

import base64
import json
import os
import re
from typing import Any

import httpx
import pytest
from factories import request_item

from platform_eval import Client
from platform_eval.emulator import Emulator

#: The location's own methods of the evaluation service (the documents' others are RAG's,
#: deployment's and synthetic data's).
LOCATION_VERBS = (
    "evaluateInstances",
    "evaluateDataset",
    "generateInstanceRubrics",
    "generateUserScenarios",
    "generateLossClusters",
)
_FLAT = re.compile(r"^v1(?:beta1)?/projects/\{projectsId\}/locations/\{locationsId\}/(.+)$")


def _documented(version: str) -> set[tuple[str, str, str]]:
    """(HTTP method, collection, shape) of every evaluation and location-operation method,
    and of the location's own evaluation methods."""
    discovery = pytest.importorskip("googleapiclient")
    path = os.path.join(
        os.path.dirname(discovery.__file__), f"discovery_cache/documents/aiplatform.{version}.json"
    )
    with open(path) as handle:
        locations = json.load(handle)["resources"]["projects"]["resources"]["locations"]
    # The location's own evaluation methods (evaluateInstances, ...), listed with no collection.
    found: set[tuple[str, str, str]] = {
        (method["httpMethod"], "", f":{name}")
        for name, method in locations["methods"].items()
        if name in LOCATION_VERBS
    }
    pending = [
        body
        for name, body in locations["resources"].items()
        if name.startswith("evaluation") or name == "operations"
    ]
    while pending:
        resource = pending.pop()
        pending.extend(resource.get("resources", {}).values())
        for method in resource.get("methods", {}).values():
            match = _FLAT.match(method["flatPath"])
            assert match, method["flatPath"]
            collection, rest = re.match(r"([A-Za-z]+)(.*)", match[1]).groups()  # type: ignore[union-attr]
            shape = re.sub(r"\{[^}]+\}", "{id}", rest).removeprefix("/")
            found.add((method["httpMethod"], collection, shape))
    return found


def _served(emulator: Emulator, version: str) -> set[tuple[str, str, str]]:
    table = emulator.app.api.table
    return {
        (m.http, m.collection, m.shape)
        for m in table
        if version == "v1beta1" or (m.v1 and m.collection != "evaluationExperiments")
    }


def test_the_table_serves_exactly_the_v1beta1_document(emulator: Emulator) -> None:
    assert _served(emulator, "v1beta1") == _documented("v1beta1")


def test_v1_serves_its_document_and_the_operations_its_deletes_name(emulator: Emulator) -> None:
    served, documented = _served(emulator, "v1"), _documented("v1")
    assert documented <= served
    # v1's deletes answer operations named under the resource; they are served to be polled.
    assert {shape for _, _, shape in served - documented} == {
        "{id}/operations",
        "{id}/operations/{id}",
        "{id}/operations/{id}:wait",
    }


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PATCH", "v1beta1/{parent}/evaluationItems/x1"),
        ("POST", "v1beta1/{parent}/evaluationRuns/x1:pause"),
        ("POST", "v1beta1/{parent}/evaluationItems:import"),
        ("GET", "v1beta1/{parent}/evaluationExperiments/x1/operations"),
        ("POST", "v1beta1/{parent}/evaluationMetrics/x1/operations/o1:wait"),
        ("GET", "v1/{parent}/evaluationSets/x1/revisions"),
        ("POST", "v1beta1/{parent}/operations"),
    ],
)
def test_a_method_no_document_has_is_not_found(
    method: str, path: str, emulator: Emulator, sync_client: Client
) -> None:
    answer = httpx.request(method, f"{emulator.url}/{path.format(parent=sync_client.parent)}")
    assert answer.status_code == 404
    error = answer.json()["error"]
    assert error["status"] == "NOT_FOUND" and error["message"].startswith("no such method")


def test_a_v1_import_line_with_a_v1beta1_field_fails_the_import_naming_it(
    emulator: Emulator, sync_client: Client, project: str
) -> None:
    line = request_item("x", candidates=[{"candidate": "a", "text": "hello"}])
    line["evaluationRequest"]["candidateResponses"][0]["events"] = [
        {"role": "model", "parts": [{"text": "x"}]}
    ]
    body: dict[str, Any] = {
        "evaluationSet": {"displayName": "s"},
        "gcsDestination": {"outputUriPrefix": f"gs://{project}-imports/p/"},
        "inlineSource": {
            "content": base64.b64encode(json.dumps(line).encode()).decode(),
            "importSchemaConfig": {"dataFormat": "JSONL"},
        },
    }
    sets = f"{emulator.url}/{{version}}/{sync_client.parent}/evaluationSets:import"
    refused = httpx.post(sets.format(version="v1"), json=body).json()
    message = refused["error"]["message"]
    assert "line 1" in message and "evaluationRequest.candidateResponses[0].events" in message
    assert "not a field of the v1 API" in message
    # v1beta1 has the field: the same import succeeds there.
    imported = httpx.post(sets.format(version="v1beta1"), json=body).json()
    assert "error" not in imported and imported["response"]["displayName"] == "s"


def test_a_v1_patch_with_a_v1beta1_field_is_refused(
    emulator: Emulator, sync_client: Client
) -> None:
    item = sync_client.create_item(request_item("x"))
    created = sync_client.create_set(display_name="s", items=[item])
    patch = {"harborDataset": {}}
    v1 = httpx.patch(f"{emulator.url}/v1/{created.name}", json=patch)
    assert v1.status_code == 400
    assert v1.json()["error"]["message"].startswith("harborDataset: not a field of the v1 API")


def _described() -> set[tuple[str, str, str, str]]:
    """(version, HTTP method, collection, shape) of every API path the OpenAPI description
    has, its ``{version}`` and ``{collection}`` parameters expanded to the values they take."""
    from platform_eval.emulator.openapi import openapi_document

    found = set()
    for template, item in openapi_document()["paths"].items():
        match = re.match(r"^/([^/]+)/projects/\{project\}/locations/\{location\}/?(.+)$", template)
        if not match:
            continue
        enums = {
            p["name"]: p["schema"]["enum"]
            for p in item.get("parameters", [])
            if "enum" in p.get("schema", {})
        }
        versions = enums.get("version", []) if match[1] == "{version}" else [match[1]]
        first, rest = re.match(r"(\{collection\}|[A-Za-z]*)(.*)", match[2]).groups()  # type: ignore[union-attr]
        collections = enums["collection"] if first == "{collection}" else [first]
        shape = re.sub(r"\{[^}]+\}", "{id}", rest).removeprefix("/")
        for http in ("get", "post", "patch", "delete"):
            if http in item:
                for version in versions:
                    for collection in collections:
                        found.add((version, http.upper(), collection, shape))
    return found


def test_the_openapi_description_names_exactly_what_the_table_serves(emulator: Emulator) -> None:
    served = {("v1beta1", *key) for key in _served(emulator, "v1beta1")}
    served |= {("v1", *key) for key in _served(emulator, "v1")}
    assert _described() == served
