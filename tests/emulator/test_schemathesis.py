"""Schemathesis fuzzes the emulator from its own OpenAPI description: no 5xx, and every error a
google.rpc body. CI runs a few examples per operation; ``nox -s schemathesis`` runs many."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from platform_eval.emulator import Emulator

#: Generated requests for every operation: CI runs it, a newcomer's first run does not.
pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("PLATFORM_EVAL_SCHEMATHESIS_EXAMPLES", "8"))
#: Fault injection answers with the status it was told to, and reset empties the store under
#: other tests: both are meant to, so they are described but not fuzzed.
NOT_FUZZED = {"add_faults", "reset"}


@pytest.fixture(scope="module")
def fuzzed_emulator() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


def _operations() -> list[Any]:
    from platform_eval.emulator.openapi import openapi_document

    loaded = schemathesis.openapi.from_dict(openapi_document())
    found = []
    for result in loaded.get_all_operations():
        operation = result.ok()
        if operation.definition.raw.get("operationId") not in NOT_FUZZED:
            found.append(operation)
    return found


OPERATIONS = _operations()


def _check(response: Any, what: str) -> None:
    status = response.status_code
    assert status < 500, f"{what} -> {status}: {response.text[:500]}"
    if status >= 400:
        try:
            error = json.loads(response.content)["error"]
        except (ValueError, KeyError, TypeError):
            error = None
        assert isinstance(error, dict), (
            f"{what} -> {status}: not a google.rpc body: {response.text[:300]!r}"
        )
        assert error["code"] == status and isinstance(error["message"], str), (
            f"{what} -> {status} without a google.rpc error body: {response.text[:300]}"
        )


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("operation", OPERATIONS, ids=[o.label for o in OPERATIONS])
def test_no_server_errors_and_only_google_rpc_errors(
    operation: Any, mode: GenerationMode, fuzzed_emulator: Emulator
) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def fuzz(case: schemathesis.Case) -> None:
        response = case.call(base_url=fuzzed_emulator.url)
        _check(response, f"{case.method} {response.request.url}")

    try:
        fuzz()
    except Unsatisfiable:
        # Operations without parameters or body have no invalid input to make.
        pytest.skip(f"no {mode.value} inputs to generate for {operation.label}")


def test_the_description_is_served_and_names_every_collection(fuzzed_emulator: Emulator) -> None:
    document = httpx.get(f"{fuzzed_emulator.url}/_emulator/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    paths = " ".join(document["paths"])
    for collection in (
        "evaluationItems",
        "evaluationSets",
        "evaluationRuns",
        "evaluationExperiments",
    ):
        assert collection in paths
    assert "EvaluationItem" in document["components"]["schemas"]
