"""Set and item revisions: frozen copies that runs evaluate, whatever changes afterwards."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from discovery_documents import check
from factories import agent_data, reply, request_item, user

from platform_eval import Client, errors
from platform_eval._transport import REQUEST_ID_HEADER, ApiCall
from platform_eval.emulator import Emulator
from platform_eval.types import EvaluationItemRevision, EvaluationSetRevision


def _answered(question: str, answer: str, golden: str | None = None) -> dict[str, Any]:
    candidate = {"candidate": "agent", "agentData": agent_data([user(question), reply(answer)])}
    expected = {"text": answer if golden is None else golden}
    return request_item(question, prompt=None, golden=expected, candidates=[candidate])


def _results_by_request(client: Any, run: Any) -> dict[str, Any]:
    return {
        result.evaluation_response.evaluation_request: result.evaluation_response
        for result in client.get_results(run)
    }


def test_a_set_revision_freezes_the_set_and_each_item(client: Any) -> None:
    first = client.create_item(_answered("2 + 2?", "4"))
    second = client.create_item(_answered("3 + 3?", "6"))
    metadata = {"owner_team": {"Name": "math", "max_tokens": 3}}
    evaluation_set = client.create_set(
        {
            "displayName": "arithmetic",
            "evaluationItems": [first.name, second.name],
            "metadata": metadata,
        }
    )

    future = client.create_set_revision(evaluation_set, wait=True)
    revision = future.wait()
    assert isinstance(revision, EvaluationSetRevision)
    assert revision.name.startswith(f"{evaluation_set.name}/revisions/")
    assert future.name.startswith(f"{evaluation_set.name}/operations/")
    assert revision.create_time is not None
    snapshot = revision.snapshot
    assert snapshot.name == evaluation_set.name
    assert snapshot.display_name == "arithmetic"
    assert snapshot.metadata == metadata  # free-form: as sent
    frozen = snapshot.evaluation_items
    assert [name.split("/revisions/")[0] for name in frozen] == [first.name, second.name]
    assert client.get_set_revision(revision.name) == revision

    item_revision = client.get_item_revision(frozen[0])
    assert isinstance(item_revision, EvaluationItemRevision)
    assert item_revision.name == frozen[0]
    assert item_revision.snapshot.to_wire() == client.get_item(first).to_wire()


def test_a_run_on_a_revision_evaluates_the_frozen_items(client: Any) -> None:
    first = client.create_item(_answered("2 + 2?", "4"))
    second = client.create_item(_answered("3 + 3?", "6"))
    evaluation_set = client.create_set(display_name="arithmetic", items=[first, second])
    revision = client.create_set_revision(evaluation_set, wait=True).wait()

    # The set changes: the revision does not. An item the revision holds cannot go, even
    # with force, as the documents say (FAILED_PRECONDITION).
    later = client.create_item(_answered("4 + 4?", "8"))
    client.update_set({"name": evaluation_set.name, "evaluationItems": [later.name]})
    for force in (False, True):
        with pytest.raises(errors.FailedPrecondition, match="held by the set revision"):
            client.delete_item(first, wait=True, force=force)

    run = client.create_run(evaluation_set=revision, metrics=["exact_match"])
    assert run.data_source.evaluation_set_revision == revision.name
    assert run.data_source.evaluation_set is None
    done = client.wait_for_run(run, poll_interval=0.05, timeout=30)
    assert done.state == "SUCCEEDED"
    assert done.evaluation_set_snapshot == revision.name
    results = _results_by_request(client, done)
    assert set(results) == {first.name, second.name}
    for name, frozen in zip(
        (first.name, second.name), revision.snapshot.evaluation_items, strict=True
    ):
        response = results[name]
        assert response.evaluation_request_revision == frozen
        assert [r.score for r in response.candidate_results] == [1.0]


def test_deleting_a_set_with_revisions_needs_force_and_takes_them_along(client: Any) -> None:
    item = client.create_item(_answered("2 + 2?", "4"))
    evaluation_set = client.create_set(display_name="s", items=[item])
    revision = client.create_set_revision(evaluation_set, wait=True).wait()
    with pytest.raises(errors.FailedPrecondition, match="1 revision"):
        client.delete_set(evaluation_set, wait=True)
    client.get_set(evaluation_set.name)  # still there
    client.delete_set(evaluation_set, wait=True, force=True)
    with pytest.raises(errors.NotFound):
        client.get_set_revision(revision.name)
    # Its item revision went with the last set revision that held it: the item goes freely.
    client.delete_item(item, wait=True)
    with pytest.raises(errors.NotFound):
        client.get_item(item.name)


def test_unchanged_items_share_a_revision_kept_while_one_set_revision_uses_it(
    client: Any,
) -> None:
    item = client.create_item(_answered("2 + 2?", "4"))
    evaluation_set = client.create_set(display_name="s", items=[item])
    older = client.create_set_revision(evaluation_set, wait=True).wait()
    newer = client.create_set_revision(evaluation_set, wait=True).wait()
    assert older.name != newer.name
    shared = older.snapshot.evaluation_items
    assert newer.snapshot.evaluation_items == shared

    listed = [revision.name for revision in client.list_set_revisions(evaluation_set, page_size=1)]
    assert listed == [newer.name, older.name]  # newest first, one page at a time

    client.delete_set_revision(older, wait=True)
    with pytest.raises(errors.NotFound):
        client.get_set_revision(older.name)
    assert client.get_item_revision(shared[0]).name == shared[0]

    client.delete_set_revision(newer.name, wait=True)
    with pytest.raises(errors.NotFound):
        client.get_item_revision(shared[0])


def test_deleting_a_set_with_force_deletes_its_revisions(client: Any) -> None:
    item = client.create_item(_answered("2 + 2?", "4"))
    evaluation_set = client.create_set(display_name="s", items=[item])
    revision = client.create_set_revision(evaluation_set, wait=True).wait()
    client.delete_set(evaluation_set, wait=True, force=True)
    with pytest.raises(errors.NotFound):
        client.get_set_revision(revision)
    with pytest.raises(errors.NotFound):
        client.get_item_revision(revision.snapshot.evaluation_items[0])
    with pytest.raises(errors.NotFound):
        client.create_run(evaluation_set=revision.name, metrics=["exact_match"])


def test_a_payload_in_cloud_storage_is_frozen_inline(
    sync_client: Client, emulator: Emulator, project: str
) -> None:
    uri = f"gs://{project}-payloads/one.json"

    def put(golden: str) -> None:
        httpx.post(
            f"{emulator.url}/upload/storage/v1/b/{project}-payloads/o",
            params={"uploadType": "media", "name": "one.json", "userProject": project},
            content=json.dumps(_answered("2 + 2?", "4", golden)["evaluationRequest"]).encode(),
        ).raise_for_status()

    put("4")
    item = sync_client.create_item(
        {"displayName": "in storage", "evaluationItemType": "REQUEST", "gcsUri": uri}
    )
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    revision = sync_client.create_set_revision(evaluation_set, wait=True).wait()
    frozen = sync_client.get_item_revision(revision.snapshot.evaluation_items[0]).snapshot
    assert frozen.gcs_uri is None
    assert frozen.evaluation_request.golden_response.text == "4"

    put("5")  # the object changes: a run of the set sees it, a run of the revision does not
    scores = {}
    for source in (evaluation_set, revision):
        run = sync_client.create_run(evaluation_set=source, metrics=["exact_match"])
        done = sync_client.wait_for_run(run, poll_interval=0.05, timeout=30)
        [response] = _results_by_request(sync_client, done).values()
        scores[source.name] = response.candidate_results[0].score
    assert scores == {evaluation_set.name: 0.0, revision.name: 1.0}


def test_a_revision_of_a_set_naming_a_deleted_item_is_refused(sync_client: Client) -> None:
    item = sync_client.create_item(_answered("2 + 2?", "4"))
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    sync_client.delete_item(item, wait=True)
    with pytest.raises(errors.FailedPrecondition, match=r"evaluationItems\[0\].*no longer exists"):
        sync_client.create_set_revision(evaluation_set)


def test_a_retried_create_answers_with_the_first_operation(
    sync_client: Client, emulator: Emulator
) -> None:
    item = sync_client.create_item(request_item("x"))
    evaluation_set = sync_client.create_set(display_name="one", items=[item])
    url = f"{emulator.url}/v1beta1/{evaluation_set.name}/revisions"
    headers = {REQUEST_ID_HEADER: "retry-1"}
    first = httpx.post(url, json={}, headers=headers).json()
    again = httpx.post(url, json={}, headers=headers).json()
    assert first == again
    assert len(list(sync_client.list_set_revisions(evaluation_set))) == 1
    assert len(first["response"]["snapshot"]["evaluationItems"]) == 1


def test_revisions_are_checked_as_the_service_checks_them(
    sync_client: Client, emulator: Emulator
) -> None:
    item = sync_client.create_item(request_item("x"))
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    base = f"{emulator.url}/v1beta1/{evaluation_set.name}/revisions"
    typo = httpx.post(base, json={"snapshots": {}})
    assert typo.status_code == 400
    assert "snapshots" in typo.json()["error"]["message"]
    # Revisions are a v1beta1 method: the v1 API does not have them.
    v1 = httpx.get(base.replace("/v1beta1/", "/v1/"))
    assert v1.status_code == 404
    assert httpx.get(f"{base}/nope").status_code == 404
    assert httpx.patch(f"{base}/nope", json={}).status_code == 404

    with pytest.raises(ValueError, match="not a revision name of evaluationSets"):
        sync_client.get_set_revision(evaluation_set.name)
    with pytest.raises(ValueError, match="not a revision name of evaluationItems"):
        sync_client.get_item_revision(f"{evaluation_set.name}/revisions/1")


def test_what_revisions_and_their_runs_serve_is_in_the_schema(sync_client: Client) -> None:
    item = sync_client.create_item(_answered("2 + 2?", "4"))
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    future = sync_client.create_set_revision(evaluation_set, wait=True)
    revision = future.wait()
    run = sync_client.create_run(evaluation_set=revision, metrics=["exact_match"])
    done = sync_client.wait_for_run(run, poll_interval=0.05, timeout=30)
    raw = sync_client._transport.request
    answered = raw(ApiCall("GET", str(future.name)))["response"]
    assert answered.pop("@type").endswith(".v1beta1.EvaluationSetRevision")
    check(answered, "EvaluationSetRevision", "v1beta1")
    check(raw(ApiCall("GET", str(revision.name))), "EvaluationSetRevision", "v1beta1")
    frozen = revision.snapshot.evaluation_items[0]
    check(raw(ApiCall("GET", frozen)), "EvaluationItemRevision", "v1beta1")
    check(raw(ApiCall("GET", str(done.name))), "EvaluationRun", "v1beta1")
    [result] = sync_client.get_results(done)
    check(raw(ApiCall("GET", str(result.name))), "EvaluationItem", "v1beta1")
