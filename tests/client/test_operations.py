"""Long-running operations: deletes answer with one, and it can be read, listed and waited on."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from discovery_documents import VERSIONS, document, violations
from factories import request_item

from platform_eval import AsyncClient, Client, errors
from platform_eval._transport import ApiCall
from platform_eval.emulator import Emulator
from platform_eval.lro import OperationFuture
from platform_eval.types import Operation

DELETE_METADATA = "type.googleapis.com/google.cloud.aiplatform.v1beta1.DeleteOperationMetadata"
EMPTY = "type.googleapis.com/google.protobuf.Empty"


def test_a_delete_answers_with_a_done_operation_of_the_resource(client: Any) -> None:
    item = client.create_item(request_item("bye"))
    future = client.delete_item(item)
    assert future.done
    assert future.name.startswith(f"{item.name}/operations/")
    assert future.operation.metadata["@type"] == DELETE_METADATA
    assert set(future.operation.metadata["genericMetadata"]) == {"createTime", "updateTime"}
    assert future.operation.response == {"@type": EMPTY}
    with pytest.raises(errors.NotFound):
        client.get_item(item)

    again = client.get_operation(future.name)
    assert again == future.operation
    assert client.wait_operation(future.name, timeout=60).done
    assert [op.name for op in client.list_operations(item)] == [future.name]

    client.delete_operation(future.name)
    with pytest.raises(errors.NotFound):
        client.get_operation(future.name)
    assert list(client.list_operations(item.name)) == []


def test_every_delete_can_be_waited_on(sync_client: Client) -> None:
    item = sync_client.create_item(request_item("x"))
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    run = sync_client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
    for delete, resource in (
        (sync_client.delete_run, run),
        (sync_client.delete_set, evaluation_set),
        (sync_client.delete_item, item),
    ):
        future = delete(resource, wait=True)
        assert isinstance(future, OperationFuture)
        assert future.done and future.wait() is None and future.exception() is None
        with pytest.raises(errors.NotFound):
            delete(resource)


@pytest.mark.anyio
async def test_the_async_client_waits_on_its_operations(emulator: Emulator, project: str) -> None:
    async with emulator.async_client(project) as client:
        item = await client.create_item(request_item("x"))
        future = await client.delete_item(item)
        assert await future.wait(timeout=5) is None
        listed = [op.name async for op in client.list_operations(item)]
        assert listed == [future.name]
        assert (await client.get_operation(future.name)).done


@pytest.mark.parametrize("version", VERSIONS)
def test_operations_are_in_the_schema(version: str, emulator: Emulator, project: str) -> None:
    with emulator.client(project, api_version=version) as client:
        item = client.create_item(request_item("x"))
        future = client.delete_item(item)
        served = client._transport.request(ApiCall("GET", str(future.name)))
        assert served["metadata"]["@type"].startswith(
            f"type.googleapis.com/google.cloud.aiplatform.{version}."
        )
        spec = document(version)["schemas"]["GoogleLongrunningOperation"]
        assert violations(served, spec, version) == []
        listed = client._transport.request(ApiCall("GET", f"{item.name}/operations"))
        spec = document(version)["schemas"]["GoogleLongrunningListOperationsResponse"]
        assert violations(listed, spec, version) == []


def test_operation_names_are_checked(sync_client: Client) -> None:
    with pytest.raises(ValueError, match="not an operation name"):
        sync_client.get_operation("projects/p/locations/l/evaluationItems/1")
    with pytest.raises(ValueError, match="not a resource name"):
        list(sync_client.list_operations("items/1"))


# -- an operation that is not done yet: the emulator finishes all of its work before it
# answers, so a service that answers "not done" is played by a transport. ------------------


def _service(answers: list[dict[str, Any]]) -> tuple[httpx.MockTransport, list[str]]:
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        return httpx.Response(200, json=answers[min(len(seen) - 1, len(answers) - 1)])

    return httpx.MockTransport(handle), seen


OP = "projects/p/locations/us-central1/evaluationSets/1/operations/7"


def _mock_client(transport: httpx.MockTransport) -> Client:
    return Client(
        "p",
        "us-central1",
        api_endpoint="http://service.test",
        credentials=_anonymous(),
        http_client=httpx.Client(transport=transport),
    )


def _anonymous() -> Any:
    from google.auth.credentials import AnonymousCredentials

    return AnonymousCredentials()


def test_wait_polls_until_the_operation_is_done() -> None:
    answers = [
        {"name": OP, "done": False},
        {"name": OP, "done": False},
        {"name": OP, "done": True, "response": {"@type": EMPTY}},
    ]
    transport, seen = _service(answers)
    with _mock_client(transport) as client:
        future = client._future(Operation(name=OP, done=False), lambda _: None)
        assert not future.done
        assert future.wait(timeout=10, poll_interval=0.01) is None
    assert seen == [f"GET /v1beta1/{OP}"] * 3


def test_a_failed_operation_raises_its_error_as_its_status_says() -> None:
    failed = {"name": OP, "done": True, "error": {"code": 5, "message": "gone"}}
    transport, _ = _service([failed])
    with _mock_client(transport) as client:
        future = client._future(Operation(name=OP, done=False), lambda _: None)
        with pytest.raises(errors.NotFound, match=r"gone \[projects/p/.*/operations/7\]"):
            future.wait(timeout=10, poll_interval=0.01)
        assert isinstance(future.exception(), errors.NotFound)


def test_wait_gives_up_after_its_timeout() -> None:
    transport, _ = _service([{"name": OP, "done": False}])
    with _mock_client(transport) as client:
        future = client._future(Operation(name=OP, done=False), lambda _: None)
        with pytest.raises(errors.WaitTimeoutError, match=r"not done after 0\.05 s"):
            future.wait(timeout=0.05, poll_interval=0.01)


def test_an_empty_delete_answer_is_a_finished_operation() -> None:
    transport, _ = _service([{}])
    with _mock_client(transport) as client:
        future = client.delete_item("1")
        assert future.done and future.name is None and future.wait() is None


@pytest.mark.anyio
async def test_the_async_future_polls_too() -> None:
    answers = [{"name": OP, "done": False}, {"name": OP, "done": True, "response": {}}]
    calls: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        return httpx.Response(200, content=json.dumps(answers[len(calls) - 1]))

    async with AsyncClient(
        "p",
        "us-central1",
        api_endpoint="http://service.test",
        credentials=_anonymous(),
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handle)),
    ) as client:
        future = client._future(Operation(name=OP, done=False), lambda _: "finished")
        assert await future.wait(timeout=10, poll_interval=0.01) == "finished"
    assert len(calls) == 2
