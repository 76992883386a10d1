"""A client we did not write, built from the discovery documents, calls every method.

google-api-python-client's ``build_from_document`` makes a client out of each document
(v1beta1 and v1): it builds the URLs, query parameters and bodies exactly as the documents
describe them, over httplib2. Every evaluation method of both documents, and the location's
operations, is called here against the emulator, and each answer is checked against the
method's response schema. A method the documents add fails the test until it is called here.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from discovery_documents import document, violations
from factories import request_item

from platform_eval.emulator import Emulator

discovery = pytest.importorskip("googleapiclient.discovery")
errors = pytest.importorskip("googleapiclient.errors")
httplib2 = pytest.importorskip("httplib2")

LOCATION = "us-central1"


@pytest.fixture
def services(emulator: Emulator) -> Iterator[dict[str, Any]]:
    built = {
        version: discovery.build_from_document(
            document(version),
            http=httplib2.Http(timeout=30),
            client_options={"api_endpoint": emulator.url},
        )
        for version in ("v1beta1", "v1")
    }
    yield built
    for service in built.values():
        service.close()


def _documented(version: str) -> set[str]:
    """Every method under the evaluation collections, and the location's operations."""
    locations = document(version)["resources"]["projects"]["resources"]["locations"]
    found = {f"operations.{m}" for m in locations["resources"]["operations"]["methods"]}

    def walk(resources: dict[str, Any], path: tuple[str, ...]) -> None:
        for name, resource in resources.items():
            here = (*path, name)
            found.update(".".join((*here, method)) for method in resource.get("methods", {}))
            walk(resource.get("resources", {}), here)

    for name, resource in locations["resources"].items():
        if name.startswith("evaluation"):
            walk({name: resource}, ())
    return found


class Calls:
    """Calls methods of one built service, checking each answer against its schema."""

    def __init__(self, service: Any, version: str, project: str) -> None:
        self.service, self.version = service, version
        self.parent = f"projects/{project}/locations/{LOCATION}"
        self.called: set[str] = set()

    def __call__(self, method: str, **params: Any) -> Any:
        *path, verb = method.split(".")
        target = self.service.projects().locations()
        for step in path:
            target = getattr(target, step)()
        answer = getattr(target, "import_" if verb == "import" else verb)(**params).execute()
        self.called.add(method)
        spec = self._response_schema(method)
        if spec is not None:
            assert violations(answer, {"$ref": spec}, self.version) == [], method
        return answer

    def _response_schema(self, method: str) -> str | None:
        resource = document(self.version)["resources"]["projects"]["resources"]["locations"]
        *path, verb = method.split(".")
        for step in path:
            resource = resource["resources"][step]
        ref = resource["methods"][verb].get("response", {}).get("$ref")
        return None if ref == "GoogleProtobufEmpty" else ref

    def done(self, operation: dict[str, Any]) -> dict[str, Any]:
        """An operation's final state, waited on through ``operations.wait``."""
        if not operation.get("done"):
            operation = self("operations.wait", name=operation["name"], timeout="30s")
        assert operation.get("done"), operation
        assert "error" not in operation, operation
        return operation


def _inline(items: list[dict[str, Any]]) -> dict[str, Any]:
    content = "\n".join(json.dumps(item) for item in items).encode()
    return {
        "content": base64.b64encode(content).decode(),
        "importSchemaConfig": {"dataFormat": "JSONL"},
    }


def _item(text: str) -> dict[str, Any]:
    return request_item(
        text, prompt=text, golden={"text": text}, candidates=[{"candidate": "c", "text": text}]
    )


def _sub_operations(call: Calls, collection: str, resource: str) -> None:
    """A resource's own operations: its delete's operation is listed, read, waited on and
    deleted under the resource's name."""
    operations = call(f"{collection}.operations.list", name=resource)
    names = [op["name"] for op in operations.get("operations", [])]
    assert names, f"no operation listed under {resource}"
    name = names[0]
    assert name.startswith(f"{resource}/operations/")
    call(f"{collection}.operations.get", name=name)
    if f"{collection}.operations.wait" in _documented(call.version):
        call.done(call(f"{collection}.operations.wait", name=name, timeout="5s"))
    call(f"{collection}.operations.delete", name=name)


@pytest.mark.parametrize("version", ["v1beta1", "v1"])
def test_a_discovery_built_client_calls_every_method(
    emulator: Emulator, services: dict[str, Any], version: str, project: str
) -> None:
    call = Calls(services[version], version, project)
    parent = call.parent
    beta = version == "v1beta1"

    # Items and sets.
    first = call("evaluationItems.create", parent=parent, body=_item("first"))
    # As the service's create answer: no createTime, which a GET has.
    assert "createTime" not in first
    first = call("evaluationItems.get", name=first["name"])
    assert first["createTime"]
    listed = call("evaluationItems.list", parent=parent, pageSize=10, orderBy="create_time")
    assert [i["name"] for i in listed["evaluationItems"]] == [first["name"]]
    evaluation_set = call(
        "evaluationSets.create",
        parent=parent,
        body={"displayName": "set", "evaluationItems": [first["name"]]},
    )
    fetched = call("evaluationSets.get", name=evaluation_set["name"])
    assert {k: v for k, v in fetched.items() if not k.endswith("Time")} == evaluation_set
    patched = call(
        "evaluationSets.patch",
        name=evaluation_set["name"],
        updateMask="displayName",
        body={"displayName": "renamed"},
    )
    assert patched["displayName"] == "renamed"
    assert call("evaluationSets.list", parent=parent, filter='display_name="renamed"')[
        "evaluationSets"
    ] == [patched]
    # pageSize pages sets as it pages items: one set a page, a token to the next.
    second_set = call(
        "evaluationSets.create",
        parent=parent,
        body={"displayName": "second", "evaluationItems": [first["name"]]},
    )
    page = call("evaluationSets.list", parent=parent, pageSize=1)
    assert len(page["evaluationSets"]) == 1 and page.get("nextPageToken")
    rest = call("evaluationSets.list", parent=parent, pageSize=1, pageToken=page["nextPageToken"])
    assert {s["name"] for s in page["evaluationSets"] + rest["evaluationSets"]} == {
        evaluation_set["name"],
        second_set["name"],
    }
    call("evaluationSets.delete", name=second_set["name"])
    import_operation = call.done(
        call(
            "evaluationSets.import",
            parent=parent,
            body={
                "evaluationSet": {"displayName": "imported"},
                "inlineSource": _inline([_item("second"), _item("third")]),
                "gcsDestination": {"outputUriPrefix": f"gs://{project}-imports/"},
            },
        )
    )
    imported = import_operation["response"]
    assert len(imported["evaluationItems"]) == 2

    # Metrics.
    metric = call(
        "evaluationMetrics.create",
        parent=parent,
        evaluationMetricId="politeness",
        body={
            "displayName": "politeness",
            "metric": {"llmBasedMetricSpec": {"metricPromptTemplate": "Is {response} polite?"}},
        },
    )
    assert metric["name"] == f"{parent}/evaluationMetrics/politeness"
    assert call("evaluationMetrics.get", name=metric["name"]) == metric
    assert call("evaluationMetrics.list", parent=parent)["evaluationMetrics"] == [metric]

    # Experiments (v1beta1 only).
    experiment = None
    if beta:
        experiment = call(
            "evaluationExperiments.create", parent=parent, body={"displayName": "experiment"}
        )
        assert call("evaluationExperiments.get", name=experiment["name"]) == experiment
        renamed = call(
            "evaluationExperiments.patch",
            name=experiment["name"],
            updateMask="displayName",
            body={"displayName": "experiment 2"},
        )
        assert renamed["displayName"] == "experiment 2"
        assert call("evaluationExperiments.list", parent=parent)["evaluationExperiments"] == [
            renamed
        ]

    # Runs: one finishes, one is cancelled.
    run_body: dict[str, Any] = {
        "displayName": "run",
        "dataSource": {"evaluationSet": imported["name"]},
        "evaluationConfig": {"metrics": [{"metric": "exact_match"}]},
    }
    if experiment is not None:
        run_body["evaluationExperiment"] = experiment["name"]
    with emulator.executor.paused(after_items=1):
        cancelled = call("evaluationRuns.create", parent=parent, body=run_body)
        assert emulator.executor.wait_until_held()
        call("evaluationRuns.cancel", name=cancelled["name"], body={})
    run = call("evaluationRuns.create", parent=parent, body=run_body)
    finished = call("evaluationRuns.get", name=run["name"])
    for _ in range(600):
        if finished["state"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            break
        finished = call("evaluationRuns.get", name=run["name"])
    assert finished["state"] == "SUCCEEDED", finished
    runs = call("evaluationRuns.list", parent=parent, orderBy="create_time desc")["evaluationRuns"]
    assert {r["name"] for r in runs} == {run["name"], cancelled["name"]}
    if beta:
        assert experiment is not None
        listed_in = call("evaluationExperiments.get", name=experiment["name"])
        assert run["name"] in listed_in.get("evaluationRuns", [])

    # Revisions (v1beta1 only): a set's revision, the items it holds, and each deleted.
    if beta:
        revision = call.done(
            call(
                "evaluationSets.revisions.create",
                parent=imported["name"],
                body={},
            )
        )["response"]
        assert revision.pop("@type").endswith(".EvaluationSetRevision")
        assert call("evaluationSets.revisions.get", name=revision["name"]) == revision
        assert call("evaluationSets.revisions.list", parent=imported["name"])[
            "evaluationSetRevisions"
        ] == [revision]
        [item_revision, *_] = revision["snapshot"]["evaluationItems"]
        read = call("evaluationItems.revisions.get", name=item_revision)
        assert read["name"] == item_revision
        call.done(call("evaluationSets.revisions.delete", name=revision["name"]))

    # Deletes, each a long-running operation, and the operations they leave.
    call.done(call("evaluationRuns.delete", name=cancelled["name"]))
    call.done(call("evaluationMetrics.delete", name=metric["name"]))
    call.done(call("evaluationSets.delete", name=evaluation_set["name"]))
    call.done(call("evaluationItems.delete", name=first["name"]))
    if beta:
        assert experiment is not None
        call.done(call("evaluationExperiments.delete", name=experiment["name"]))
        _sub_operations(call, "evaluationRuns", cancelled["name"])
        _sub_operations(call, "evaluationMetrics", metric["name"])
        _sub_operations(call, "evaluationSets", evaluation_set["name"])
        _sub_operations(call, "evaluationItems", first["name"])

    # The location's operations: each operation by its id, whatever resource it belongs to.
    by_location = f"{parent}/operations/{import_operation['name'].rsplit('/', 1)[1]}"
    assert call("operations.get", name=by_location) == import_operation
    assert import_operation["name"] in {
        o["name"] for o in call("operations.list", name=parent).get("operations", [])
    }
    assert call("operations.wait", name=by_location, timeout="1s") == import_operation
    call("operations.cancel", name=by_location)
    call("operations.delete", name=by_location)
    with pytest.raises(errors.HttpError) as gone:
        call("operations.get", name=by_location)
    assert gone.value.resp.status == 404

    missing = _documented(version) - call.called
    assert not missing, f"methods of the {version} document not called: {sorted(missing)}"


@pytest.mark.parametrize("collection", ["evaluationItems", "evaluationSets", "evaluationRuns"])
def test_a_v1_client_polls_a_deletes_operation_by_the_name_it_is_given(
    services: dict[str, Any], project: str, collection: str
) -> None:
    """v1's document has only projects.locations.operations: a delete's operation is named
    under the location, so the v1 client polls what it was given (it refused the resource-level
    name before sending anything)."""
    call = Calls(services["v1"], "v1", project)
    item = call("evaluationItems.create", parent=call.parent, body=_item("bye"))
    created = item
    if collection == "evaluationSets":
        created = call(
            "evaluationSets.create",
            parent=call.parent,
            body={"displayName": "s", "evaluationItems": [item["name"]]},
        )
    elif collection == "evaluationRuns":
        evaluation_set = call(
            "evaluationSets.create",
            parent=call.parent,
            body={"displayName": "s", "evaluationItems": [item["name"]]},
        )
        created = call(
            "evaluationRuns.create",
            parent=call.parent,
            body={
                "displayName": "r",
                "evaluationSetSnapshot": evaluation_set["name"],
                "dataSource": {"evaluationSet": evaluation_set["name"]},
                "evaluationConfig": {"metrics": [{"metric": "exact_match"}]},
            },
        )
    operation = call(f"{collection}.delete", name=created["name"])
    assert operation["name"].startswith(f"{call.parent}/operations/")
    polled = call("operations.get", name=operation["name"])
    assert polled == operation and polled["done"] is True
    assert call("operations.wait", name=operation["name"], timeout="5s")["done"] is True
