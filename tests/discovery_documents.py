"""Google's discovery documents of the API (from google-api-python-client), and a walk that
says where a JSON value leaves one of their schemas: the tests of every layer check against
them."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

googleapiclient = pytest.importorskip("googleapiclient")
DOCUMENTS = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
VERSIONS = {"v1beta1": "GoogleCloudAiplatformV1beta1", "v1": "GoogleCloudAiplatformV1"}


@cache
def document(version: str) -> dict[str, Any]:
    return json.loads((DOCUMENTS / f"aiplatform.{version}.json").read_text())


def violations(value: Any, spec: dict[str, Any], version: str, path: str = "$") -> list[str]:
    """Where ``value`` leaves the discovery schema ``spec`` (a property or a schema)."""
    schemas = document(version)["schemas"]
    if "$ref" in spec:
        spec = schemas[spec["$ref"]]
    kind = spec.get("type")
    if kind == "any":
        return []  # free-form: metadata, additionalResults
    if kind == "object" and "properties" in spec:
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        out = []
        for key, inner in value.items():
            if key not in spec["properties"]:
                out.append(f"{path}.{key}: not in {spec.get('id')}")
            else:
                out += violations(inner, spec["properties"][key], version, f"{path}.{key}")
        return out
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        extra = spec.get("additionalProperties")
        if not extra:
            return []
        return [e for k, v in value.items() for e in violations(v, extra, version, f"{path}.{k}")]
    if kind == "array":
        if not isinstance(value, list):
            return [f"{path}: expected an array"]
        return [
            e
            for i, v in enumerate(value)
            for e in violations(v, spec["items"], version, f"{path}[{i}]")
        ]
    expected = {
        "string": str,
        "boolean": bool,
        "integer": (int, str),  # int64 travels as a string
        "number": (int, float),
    }.get(str(kind))
    if expected and not isinstance(value, expected):
        return [f"{path}: expected {kind}, found {type(value).__name__}"]
    if "enum" in spec and value not in spec["enum"]:
        return [f"{path}: {value!r} is not one of {spec['enum']}"]
    return []


def check(body: dict[str, Any], schema: str, version: str) -> None:
    spec = document(version)["schemas"][f"{VERSIONS[version]}{schema}"]
    assert violations(body, spec, version) == []
