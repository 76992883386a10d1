"""The OpenAPI 3.1 description of what the emulator serves, at ``/_emulator/openapi.json``.

Built from the same pydantic models the emulator validates requests with, so the description
cannot drift from the code; schemathesis fuzzes the emulator from it (``nox -s schemathesis``).
Every error is a google.rpc ``Status`` in ``{"error": {...}}``, as the service answers.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic.json_schema import models_json_schema

from .._version import __version__
from ..types import EvaluationItem, EvaluationRun, EvaluationSet
from .backend import EXPERIMENTS, ITEMS, RUNS, SETS

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
_EXPERIMENT = {"type": "object", "additionalProperties": True}


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
    listed = {
        "type": "object",
        "properties": {
            collection: {"type": "array", "items": schema},
            "nextPageToken": {"type": "string"},
        },
    }
    paths: dict[str, Any] = {
        f"{_PARENT}/{collection}": {
            "parameters": _PARENT_PARAMETERS,
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
        "parameters": [*_PARENT_PARAMETERS, _ID],
        "get": {"operationId": f"get_{collection}", "responses": _responses(schema)},
        "delete": {
            "operationId": f"delete_{collection}",
            "responses": _responses({"type": "object"}),
        },
    }
    if patch:
        one["patch"] = {
            "operationId": f"patch_{collection}",
            "parameters": [{"name": "updateMask", "in": "query", "schema": {"type": "string"}}],
            "requestBody": {"required": True, **_json(schema)},
            "responses": _responses(schema),
        }
    paths[f"{_PARENT}/{collection}/{{id}}"] = one
    if cancel:
        paths[f"{_PARENT}/{collection}/{{id}}:cancel"] = {
            "parameters": [*_PARENT_PARAMETERS, _ID],
            "post": {
                "operationId": f"cancel_{collection}",
                "responses": _responses({"type": "object"}),
            },
        }
    return paths


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
    return {
        "/_emulator/health": {"get": {"operationId": "health", "responses": _responses(ok)}},
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
    }


@functools.cache
def openapi_document() -> dict[str, Any]:
    refs, definitions = models_json_schema(
        [
            (EvaluationItem, "validation"),
            (EvaluationSet, "validation"),
            (EvaluationRun, "validation"),
        ],
        ref_template=_REF,
        by_alias=True,
    )
    item, evaluation_set, run = (
        refs[(m, "validation")] for m in (EvaluationItem, EvaluationSet, EvaluationRun)
    )
    schemas = {**definitions["$defs"], "Error": _ERROR, "EvaluationExperiment": _EXPERIMENT}
    experiment = {"$ref": _REF.format(model="EvaluationExperiment")}
    paths: dict[str, Any] = {}
    paths.update(_collection_paths(ITEMS, item, patch=False, cancel=False))
    paths.update(_collection_paths(SETS, evaluation_set, patch=True, cancel=False))
    paths.update(_collection_paths(RUNS, run, patch=False, cancel=True))
    paths.update(_collection_paths(EXPERIMENTS, experiment, patch=False, cancel=False))
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
