"""The OpenAPI 3.1 description of what the emulator serves, at ``/_emulator/openapi.json``.

Built from the same pydantic models the emulator validates requests with, so the description
cannot drift from the code; schemathesis fuzzes the emulator from it (``nox -s schemathesis``).
Every error is a google.rpc ``Status`` in ``{"error": {...}}``, as the service answers.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic.json_schema import models_json_schema

from .._names import EXPERIMENTS, ITEMS, METRICS, RUNS, SET_REVISIONS_LIST_KEY, SETS
from .._version import __version__
from ..types import (
    EvaluateInstancesRequest,
    EvaluateInstancesResponse,
    EvaluationExperiment,
    EvaluationItem,
    EvaluationItemRevision,
    EvaluationMetric,
    EvaluationRun,
    EvaluationSet,
    EvaluationSetRevision,
    ImportEvaluationSetRequest,
    Operation,
    WireModel,
)
from .routes import WAITED, WITH_OPERATIONS
from .versions import V1BETA1_ONLY_COLLECTIONS

_REF = "#/components/schemas/{model}"
_PARENT = "/{version}/projects/{project}/locations/{location}"

_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "integer"},
                "message": {"type": "string"},
                "status": {"type": "string"},
                "details": {"type": "array", "items": {"type": "object"}},
            },
        }
    },
}


def _path_parameter(name: str, description: str, enum: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if enum:
        schema["enum"] = enum
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": schema,
        "description": description,
    }


_PARENT_PARAMETERS = [
    _path_parameter("version", "API version", ["v1beta1", "v1"]),
    _path_parameter("project", "project id or number"),
    _path_parameter("location", "location, such as us-central1"),
]
_ID = _path_parameter("id", "resource id")
_LIST_PARAMETERS = [
    {"name": "pageSize", "in": "query", "schema": {"type": "integer"}},
    {"name": "pageToken", "in": "query", "schema": {"type": "string"}},
    {"name": "filter", "in": "query", "schema": {"type": "string"}, "description": "AIP-160"},
    {"name": "orderBy", "in": "query", "schema": {"type": "string"}, "description": "AIP-132"},
]


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _responses(ok: dict[str, Any]) -> dict[str, Any]:
    return {
        "200": {"description": "OK", **_json(ok)},
        "default": {
            "description": "a google.rpc error",
            **_json({"$ref": _REF.format(model="Error")}),
        },
    }


def _collection_paths(
    collection: str, schema: dict[str, Any], *, patch: bool, cancel: bool
) -> dict[str, Any]:
    # A collection only v1beta1 has (evaluationExperiments) is described under v1beta1 alone.
    v1 = collection not in V1BETA1_ONLY_COLLECTIONS
    parent_path = _PARENT if v1 else _PARENT.replace("{version}", "v1beta1")
    parent = _PARENT_PARAMETERS if v1 else _PARENT_PARAMETERS[1:]
    listed = {
        "type": "object",
        "properties": {
            collection: {"type": "array", "items": schema},
            "nextPageToken": {"type": "string"},
        },
    }
    paths: dict[str, Any] = {
        f"{parent_path}/{collection}": {
            "parameters": parent,
            "get": {
                "operationId": f"list_{collection}",
                "parameters": _LIST_PARAMETERS,
                "responses": _responses(listed),
            },
            "post": {
                "operationId": f"create_{collection}",
                "requestBody": {"required": True, **_json(schema)},
                "responses": _responses(schema),
            },
        },
    }
    one: dict[str, Any] = {
        "parameters": [*parent, _ID],
        "get": {"operationId": f"get_{collection}", "responses": _responses(schema)},
        "delete": {
            "operationId": f"delete_{collection}",
            "responses": _responses({"$ref": _REF.format(model="Operation")}),
        },
    }
    if patch:
        one["patch"] = {
            "operationId": f"patch_{collection}",
            "parameters": [{"name": "updateMask", "in": "query", "schema": {"type": "string"}}],
            "requestBody": {"required": True, **_json(schema)},
            "responses": _responses(schema),
        }
    paths[f"{parent_path}/{collection}/{{id}}"] = one
    if cancel:
        paths[f"{parent_path}/{collection}/{{id}}:cancel"] = {
            "parameters": [*parent, _ID],
            "post": {
                "operationId": f"cancel_{collection}",
                "responses": _responses({"type": "object"}),
            },
        }
    return paths


_OPERATION = {"$ref": _REF.format(model="Operation")}
_OPERATIONS_PAGE = {
    "type": "object",
    "properties": {
        "operations": {"type": "array", "items": _OPERATION},
        "nextPageToken": {"type": "string"},
    },
}


def _location_operation_paths() -> dict[str, Any]:
    """``projects.locations.operations``: every operation of the location, by its id."""
    operation_id = _path_parameter("operation", "operation id")
    base = f"{_PARENT}/operations"
    one = [*_PARENT_PARAMETERS, operation_id]
    return {
        base: {
            "parameters": _PARENT_PARAMETERS,
            "get": {
                "operationId": "list_location_operations",
                "parameters": _LIST_PARAMETERS,
                "responses": _responses(_OPERATIONS_PAGE),
            },
        },
        f"{base}/{{operation}}": {
            "parameters": one,
            "get": {"operationId": "get_location_operation", "responses": _responses(_OPERATION)},
            "delete": {
                "operationId": "delete_location_operation",
                "responses": _responses({"type": "object"}),
            },
        },
        f"{base}/{{operation}}:wait": {
            "parameters": one,
            "post": {"operationId": "wait_location_operation", "responses": _responses(_OPERATION)},
        },
        f"{base}/{{operation}}:cancel": {
            "parameters": one,
            "post": {
                "operationId": "cancel_location_operation",
                "responses": _responses({"type": "object"}),
            },
        },
    }


def _operation_paths() -> dict[str, Any]:
    """``{resource}/operations``: the long-running operations of one resource."""
    owner = [
        *_PARENT_PARAMETERS,
        _path_parameter("collection", "collection", list(WITH_OPERATIONS)),
        _ID,
    ]
    waited = [*_PARENT_PARAMETERS, _path_parameter("collection", "collection", list(WAITED))]
    operation_id = _path_parameter("operation", "operation id")
    base = f"{_PARENT}/{{collection}}/{{id}}/operations"
    return {
        base: {
            "parameters": owner,
            "get": {
                "operationId": "list_operations",
                "parameters": _LIST_PARAMETERS,
                "responses": _responses(_OPERATIONS_PAGE),
            },
        },
        f"{base}/{{operation}}": {
            "parameters": [*owner, operation_id],
            "get": {"operationId": "get_operation", "responses": _responses(_OPERATION)},
            "delete": {
                "operationId": "delete_operation",
                "responses": _responses({"type": "object"}),
            },
        },
        f"{base}/{{operation}}:wait": {
            "parameters": [*waited, _ID, operation_id],
            "post": {"operationId": "wait_operation", "responses": _responses(_OPERATION)},
        },
    }


def _revision_paths(set_revision: dict[str, Any], item_revision: dict[str, Any]) -> dict[str, Any]:
    """Set revisions (create, get, list, delete) and item revisions (get), v1beta1 only."""
    parent = [*_PARENT_PARAMETERS[1:], _ID]
    base = f"/v1beta1/projects/{{project}}/locations/{{location}}/{SETS}/{{id}}/revisions"
    revision_id = _path_parameter("revision", "revision id")
    listed = {
        "type": "object",
        "properties": {
            SET_REVISIONS_LIST_KEY: {"type": "array", "items": set_revision},
            "nextPageToken": {"type": "string"},
        },
    }
    operation = {"$ref": _REF.format(model="Operation")}
    item_base = f"/v1beta1/projects/{{project}}/locations/{{location}}/{ITEMS}/{{id}}"
    return {
        base: {
            "parameters": parent,
            "get": {
                "operationId": f"list_{SET_REVISIONS_LIST_KEY}",
                "parameters": _LIST_PARAMETERS[:2],
                "responses": _responses(listed),
            },
            "post": {
                "operationId": f"create_{SET_REVISIONS_LIST_KEY}",
                "requestBody": {"required": True, **_json(set_revision)},
                "responses": _responses(operation),
            },
        },
        f"{base}/{{revision}}": {
            "parameters": [*parent, revision_id],
            "get": {
                "operationId": f"get_{SET_REVISIONS_LIST_KEY}",
                "responses": _responses(set_revision),
            },
            "delete": {
                "operationId": f"delete_{SET_REVISIONS_LIST_KEY}",
                "responses": _responses(operation),
            },
        },
        f"{item_base}/revisions/{{revision}}": {
            "parameters": [*parent, revision_id],
            "get": {
                "operationId": "get_evaluationItemRevisions",
                "responses": _responses(item_revision),
            },
        },
    }


def _import_path() -> dict[str, Any]:
    return {
        f"{_PARENT}/{SETS}:import": {
            "parameters": _PARENT_PARAMETERS,
            "post": {
                "operationId": "import_evaluationSets",
                "requestBody": {
                    "required": True,
                    **_json({"$ref": _REF.format(model="ImportEvaluationSetRequest")}),
                },
                "responses": _responses({"$ref": _REF.format(model="Operation")}),
            },
        }
    }


def _storage_paths() -> dict[str, Any]:
    bucket = _path_parameter("bucket", "bucket name")
    name = _path_parameter("object", "object name")
    metadata = {"type": "object", "additionalProperties": True}
    object_paths = {
        "parameters": [bucket, name],
        "get": {
            "operationId": "get_object",
            "parameters": [
                {"name": "alt", "in": "query", "schema": {"type": "string", "enum": ["media"]}}
            ],
            "responses": _responses(metadata),
        },
    }
    return {
        "/storage/v1/b/{bucket}": {
            "parameters": [bucket],
            "get": {"operationId": "get_bucket", "responses": _responses(metadata)},
        },
        "/upload/storage/v1/b/{bucket}/o": {
            "parameters": [bucket],
            "post": {
                "operationId": "upload_object",
                "parameters": [
                    {"name": "uploadType", "in": "query", "schema": {"type": "string"}},
                    {"name": "name", "in": "query", "schema": {"type": "string"}},
                ],
                "requestBody": {
                    "content": {"application/octet-stream": {"schema": {"type": "string"}}}
                },
                "responses": _responses(metadata),
            },
        },
        "/storage/v1/b/{bucket}/o/{object}": object_paths,
        "/download/storage/v1/b/{bucket}/o/{object}": object_paths,
    }


def _control_paths() -> dict[str, Any]:
    fault = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "method": {"type": "string"},
            "kind": {
                "type": "string",
                "enum": ["status", "drop", "status_after", "drop_after", "delay"],
            },
            "status": {"type": "integer", "minimum": 400, "maximum": 599},
            "times": {"type": "integer", "minimum": 1},
            "retryAfter": {"type": "string"},
            "delay": {"type": "number", "minimum": 0, "maximum": 300},
        },
        "additionalProperties": False,
    }
    ok = {"type": "object"}
    health = {
        "type": "object",
        "required": ["status", "executor"],
        "properties": {
            "status": {"type": "string", "enum": ["ok", "degraded"]},
            "executor": {
                "type": "object",
                "required": ["state"],
                "properties": {
                    "state": {"type": "string", "enum": ["running", "degraded", "stopped"]},
                    "error": {"type": ["string", "null"]},
                    "unrecordedRuns": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    }
    computable_request = {
        "type": "object",
        "required": ["metrics"],
        "properties": {
            "metrics": {"type": "array", "items": {"type": "object"}},
            "rubricTypes": {"type": "array", "items": {"type": ["string", "null"]}},
        },
    }
    refusal = {
        "type": "object",
        "required": ["metric", "reason", "kind"],
        "properties": {
            "metric": {"type": "string"},
            "reason": {"type": "string"},
            "kind": {"type": "string", "enum": ["unknown", "service", "judge", "code"]},
        },
    }
    computable = {
        "type": "object",
        "required": ["refused"],
        "properties": {"refused": {"type": "array", "items": refusal}},
    }
    health_responses = {
        **_responses(health),
        "503": {"description": "runs cannot execute; the executor says why", **_json(health)},
    }
    return {
        "/_emulator/health": {"get": {"operationId": "health", "responses": health_responses}},
        "/_emulator/reset": {"post": {"operationId": "reset", "responses": _responses(ok)}},
        "/_emulator/faults": {
            "get": {"operationId": "list_faults", "responses": _responses(ok)},
            "post": {
                "operationId": "add_faults",
                "requestBody": {"required": True, **_json(fault)},
                "responses": _responses(ok),
            },
            "delete": {"operationId": "clear_faults", "responses": _responses(ok)},
        },
        "/_emulator/computable": {
            "post": {
                "operationId": "computable",
                "requestBody": {"required": True, **_json(computable_request)},
                "responses": _responses(computable),
            }
        },
    }


def _location_method_paths(request: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """The location's own methods; evaluateInstances also at the global path the documents
    give (``/v1beta1:evaluateInstances``)."""
    free = {"type": "object", "description": "as the discovery document describes it"}
    operation = {"$ref": _REF.format(model="Operation")}
    bodies = {
        "evaluateInstances": (request, response),
        "evaluateDataset": (free, operation),
        "generateInstanceRubrics": (free, free),
        "generateUserScenarios": (free, free),
        "generateLossClusters": (free, operation),
    }
    paths: dict[str, Any] = {}
    for verb, (body, answer) in bodies.items():
        method = {
            "operationId": verb,
            "requestBody": {"required": True, **_json(body)},
            "responses": _responses(answer),
        }
        paths[f"{_PARENT}:{verb}"] = {"parameters": _PARENT_PARAMETERS, "post": method}
    paths["/{version}:evaluateInstances"] = {
        "parameters": _PARENT_PARAMETERS[:1],
        "post": {
            **paths[f"{_PARENT}:evaluateInstances"]["post"],
            "operationId": "evaluateInstancesGlobal",
        },
    }
    return paths


@functools.cache
def openapi_document() -> dict[str, Any]:
    models: list[type[WireModel]] = [
        EvaluationItem,
        EvaluationSet,
        EvaluationRun,
        EvaluationMetric,
        EvaluationExperiment,
        ImportEvaluationSetRequest,
        Operation,
        EvaluationSetRevision,
        EvaluationItemRevision,
        EvaluateInstancesRequest,
        EvaluateInstancesResponse,
    ]
    refs, definitions = models_json_schema(
        [(model, "validation") for model in models], ref_template=_REF, by_alias=True
    )
    item, evaluation_set, run, metric, experiment = (refs[(m, "validation")] for m in models[:5])
    schemas = {**definitions["$defs"], "Error": _ERROR}
    paths: dict[str, Any] = {}
    paths.update(_collection_paths(ITEMS, item, patch=False, cancel=False))
    paths.update(_collection_paths(SETS, evaluation_set, patch=True, cancel=False))
    paths.update(_collection_paths(RUNS, run, patch=False, cancel=True))
    paths.update(_collection_paths(METRICS, metric, patch=False, cancel=False))
    paths.update(_collection_paths(EXPERIMENTS, experiment, patch=True, cancel=False))
    paths.update(_import_path())
    paths.update(
        _revision_paths(
            refs[(EvaluationSetRevision, "validation")],
            refs[(EvaluationItemRevision, "validation")],
        )
    )
    paths.update(_operation_paths())
    paths.update(_location_operation_paths())
    paths.update(
        _location_method_paths(
            refs[(EvaluateInstancesRequest, "validation")],
            refs[(EvaluateInstancesResponse, "validation")],
        )
    )
    paths.update(_storage_paths())
    paths.update(_control_paths())
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "platform-eval emulator",
            "version": __version__,
            "description": "The evaluation resources of Agent Platform (Vertex AI) as the "
            "local emulator serves them, with the Cloud Storage subset and the control routes.",
        },
        "paths": paths,
        "components": {"schemas": schemas},
    }
