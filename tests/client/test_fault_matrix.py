"""Every client method through every fault kind, sync and async, under both retry policies.

The emulator policy retries creates (the emulator dedupes them by request id); the service
policy (what a client uses against the real API, which does not) retries a create only when it
cannot have been processed. Either way: a call succeeds with the right state, or raises a typed
error; and nothing is ever created twice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from factories import request_item

from platform_eval import errors
from platform_eval.emulator import Emulator
from platform_eval.types import EvaluationRunState

FAULTS: dict[str, dict[str, Any]] = {
    "503": {"kind": "status", "status": 503},
    "429 with retry-after": {"kind": "status", "status": 429, "retryAfter": "0.01"},
    "503 after processing": {"kind": "status_after", "status": 503},
    "dropped": {"kind": "drop"},
    "dropped after processing": {"kind": "drop_after"},
    "delayed": {"kind": "delay", "delay": 0.05},
}
#: Faults after which a create may have been processed, or (503, dropped) cannot be told apart
#: from one that was: against the service these are not retried.
NOT_RETRIED_CREATE = {"503", "503 after processing", "dropped", "dropped after processing"}
PROCESSED = {"503 after processing", "dropped after processing"}


@dataclass
class World:
    """Resources that exist before the fault: an item, a set holding it, a finished run."""

    item: Any
    evaluation_set: Any
    run: Any


@dataclass(frozen=True)
class Method:
    name: str
    http_method: str
    path: Callable[[World], str]
    call: Callable[[Any, World], Any]
    check: Callable[[Any, World, Any], None]
    creates: str | None = None  # the collection a create adds to


def _count(client: Any, collection: str, display_name: str) -> int:
    lister = {"items": client.list_items, "sets": client.list_sets, "runs": client.list_runs}
    return sum(1 for r in lister[collection]() if r.display_name == display_name)


def _gone(get: Callable[[Any], Any], name: str) -> None:
    with pytest.raises(errors.NotFound):
        get(name)


METHODS = [
    Method(
        "create_item",
        "POST",
        lambda w: "evaluationItems",
        lambda c, w: c.create_item(request_item("made under fault")),
        lambda c, w, r: None,
        creates="items",
    ),
    Method(
        "get_item",
        "GET",
        lambda w: w.item.id,
        lambda c, w: c.get_item(w.item.name),
        lambda c, w, r: _equal(r, w.item),
    ),
    Method(
        "list_items",
        "GET",
        lambda w: "evaluationItems",
        lambda c, w: list(c.list_items()),
        lambda c, w, r: _contains(r, w.item),
    ),
    Method(
        "delete_item",
        "DELETE",
        lambda w: w.item.id,
        lambda c, w: c.delete_item(w.item.name),
        lambda c, w, r: _gone(c.get_item, w.item.name),
    ),
    Method(
        "create_set",
        "POST",
        lambda w: "evaluationSets",
        lambda c, w: c.create_set(display_name="made under fault", items=[w.item]),
        lambda c, w, r: None,
        creates="sets",
    ),
    Method(
        "get_set",
        "GET",
        lambda w: w.evaluation_set.id,
        lambda c, w: c.get_set(w.evaluation_set.name),
        lambda c, w, r: _equal(r, w.evaluation_set),
    ),
    Method(
        "list_sets",
        "GET",
        lambda w: "evaluationSets",
        lambda c, w: list(c.list_sets()),
        lambda c, w, r: _contains(r, w.evaluation_set),
    ),
    Method(
        "update_set",
        "PATCH",
        lambda w: w.evaluation_set.id,
        lambda c, w: c.update_set({"name": w.evaluation_set.name, "displayName": "renamed"}),
        lambda c, w, r: _renamed(c, w),
    ),
    Method(
        "delete_set",
        "DELETE",
        lambda w: w.evaluation_set.id,
        lambda c, w: c.delete_set(w.evaluation_set.name),
        lambda c, w, r: _gone(c.get_set, w.evaluation_set.name),
    ),
    Method(
        "create_run",
        "POST",
        lambda w: "evaluationRuns",
        lambda c, w: c.create_run(
            {
                "displayName": "made under fault",
                "dataSource": {"evaluationSet": w.evaluation_set.name},
                "evaluationConfig": {"metrics": [{"metric": "exact_match"}]},
            }
        ),
        lambda c, w, r: None,
        creates="runs",
    ),
    Method(
        "get_run",
        "GET",
        lambda w: w.run.id,
        lambda c, w: c.get_run(w.run.name),
        lambda c, w, r: _equal(r, w.run),
    ),
    Method(
        "list_runs",
        "GET",
        lambda w: "evaluationRuns",
        lambda c, w: list(c.list_runs()),
        lambda c, w, r: _contains(r, w.run),
    ),
    Method(
        "cancel_run",
        "POST",
        lambda w: ":cancel",
        lambda c, w: c.cancel_run(w.run.name),
        lambda c, w, r: None,  # checked in the test: the run it cancels is held running
    ),
    Method(
        "delete_run",
        "DELETE",
        lambda w: w.run.id,
        lambda c, w: c.delete_run(w.run.name),
        lambda c, w, r: _gone(c.get_run, w.run.name),
    ),
    Method(
        "wait_for_run",
        "GET",
        lambda w: w.run.id,
        lambda c, w: c.wait_for_run(w.run.name, timeout=30),
        lambda c, w, r: _equal(r, w.run),
    ),
    Method(
        "get_results",
        "GET",
        lambda w: "evaluationItems",
        lambda c, w: c.get_results(w.run),
        lambda c, w, r: _results(r, w),
    ),
]


def _equal(got: Any, expected: Any) -> None:
    assert got.to_wire() == expected.to_wire()


def _contains(listed: list[Any], expected: Any) -> None:
    assert [r.name for r in listed].count(expected.name) == 1


def _renamed(client: Any, world: World) -> None:
    assert client.get_set(world.evaluation_set.name).display_name == "renamed"


def _results(results: list[Any], world: World) -> None:
    assert len(results) == 1
    assert results[0].evaluation_response.evaluation_request == world.item.name


def _world(client: Any) -> World:
    item = client.create_item(
        request_item(
            "x", golden={"text": "hello"}, candidates=[{"candidate": "agent", "text": "hello"}]
        )
    )
    evaluation_set = client.create_set(display_name="s", items=[item])
    run = client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
    done = client.wait_for_run(run, timeout=60, poll_interval=0.01)
    # As the service, a create answers without createTime: the world is what a GET gives.
    return World(client.get_item(item), client.get_set(evaluation_set), done)


def _use_service_policy(client: Any) -> None:
    target = getattr(client, "_client", client)  # the async client inside the sync wrapper
    transport = target._transport
    transport.config = dataclasses.replace(transport.config, dedupes_creates=False)


def _diagonal(params: dict[str, Any]) -> bool:
    """One of the four (client, policy) combinations for each method and fault, turning with
    them: a quick run meets every method under every fault, and each mode, in a quarter of the
    time; CI runs the whole matrix."""
    method = [m.name for m in METHODS].index(params["method"].name)
    fault = list(FAULTS).index(params["fault"])
    mode = ["sync", "async"].index(params["client"]) * 2 + ["emulator", "service"].index(
        params["policy"]
    )
    return (method + fault) % 4 == mode


@pytest.mark.matrix(quick=_diagonal)
@pytest.mark.parametrize("policy", ["emulator", "service"])
@pytest.mark.parametrize("fault", FAULTS, ids=list(FAULTS))
@pytest.mark.parametrize("method", METHODS, ids=[m.name for m in METHODS])
def test_every_method_through_every_fault(
    client: Any, emulator: Emulator, method: Method, fault: str, policy: str
) -> None:
    world = _world(client)
    if policy == "service":
        _use_service_policy(client)
    if method.name == "cancel_run":
        with emulator.executor.paused():
            run = client.create_run(evaluation_set=world.evaluation_set, metrics=["exact_match"])
            world = dataclasses.replace(world, run=run)
            _run_under_fault(client, emulator, method, fault, policy, world)
        state = client.wait_for_run(run, timeout=60, poll_interval=0.01).state
        assert state == EvaluationRunState.CANCELLED
        return
    _run_under_fault(client, emulator, method, fault, policy, world)


def _run_under_fault(
    client: Any, emulator: Emulator, method: Method, fault: str, policy: str, world: World
) -> None:
    emulator.inject_fault(path=method.path(world), method=method.http_method, **FAULTS[fault])
    expect_error = method.creates and policy == "service" and fault in NOT_RETRIED_CREATE
    if expect_error:
        with pytest.raises((errors.APIConnectionError, errors.GoogleAPICallError)):
            method.call(client, world)
        created = _count(client, method.creates or "", "made under fault")
        assert created == (1 if fault in PROCESSED else 0)
    else:
        result = method.call(client, world)
        method.check(client, world, result)
        if method.creates:
            assert _count(client, method.creates, "made under fault") == 1
    assert emulator.pending_faults() == [], "the fault was never hit"
