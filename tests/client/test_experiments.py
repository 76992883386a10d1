"""``evaluationExperiments``: runs grouped to be compared, patched with AIP-134 update masks."""

from __future__ import annotations

from typing import Any

import pytest
from discovery_documents import VERSIONS, document, violations
from factories import request_item

from platform_eval import errors
from platform_eval._transport import ApiCall
from platform_eval.emulator import Emulator


def test_an_experiment_is_created_read_listed_patched_and_deleted(client: Any) -> None:
    created = client.create_experiment(
        {"displayName": "prompt v2", "labels": {"team": "a"}, "metadata": {"notes": ["x"]}}
    )
    assert created.name.startswith(f"{client.parent}/evaluationExperiments/")
    assert client.get_experiment(created.id) == created
    assert [e.name for e in client.list_experiments()] == [created.name]

    runs = [f"{client.parent}/evaluationRuns/1", f"{client.parent}/evaluationRuns/2"]
    updated = client.update_experiment({"name": created.name, "evaluationRuns": runs})
    assert updated.evaluation_runs == runs and updated.display_name == "prompt v2"
    assert updated.update_time >= created.update_time

    # A masked field the body leaves out is cleared; the others are kept.
    cleared = client.update_experiment({"name": created.name}, update_mask=["labels"])
    assert cleared.labels is None and cleared.evaluation_runs == runs

    client.delete_experiment(created, wait=True)
    with pytest.raises(errors.NotFound):
        client.get_experiment(created.name)


def test_update_mask_star_replaces_every_updatable_field(sync_client: Any) -> None:
    created = sync_client.create_experiment({"displayName": "a", "labels": {"k": "v"}})
    replaced = sync_client.update_experiment(
        {"name": created.name, "displayName": "b"}, update_mask=["*"]
    )
    assert replaced.display_name == "b" and replaced.labels is None
    item = sync_client.create_item(request_item("x"))
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    star = sync_client.update_set(
        {"name": evaluation_set.name, "displayName": "t", "evaluationItems": [item.name]},
        update_mask=["*"],
    )
    assert star.display_name == "t"
    # "*" left out of the body clears a field; a required one cannot be cleared.
    with pytest.raises(errors.InvalidArgument, match="evaluationItems is required"):
        sync_client.update_set({"name": evaluation_set.name, "displayName": "u"}, update_mask=["*"])


def test_a_field_that_cannot_be_updated_is_named(sync_client: Any) -> None:
    created = sync_client.create_experiment({"displayName": "a"})
    with pytest.raises(errors.InvalidArgument, match="'createTime' cannot be updated"):
        sync_client.update_experiment({"name": created.name}, update_mask=["createTime"])
    with pytest.raises(ValueError, match="displayNme"):
        sync_client.create_experiment({"displayNme": "typo"})


@pytest.mark.parametrize("version", ["v1beta1"])
def test_served_experiments_are_in_the_schema(
    version: str, emulator: Emulator, project: str
) -> None:
    assert version in VERSIONS  # v1 has no evaluationExperiments
    with emulator.client(project, api_version=version) as client:
        created = client.create_experiment({"displayName": "x", "evaluationRuns": []})
        served = client._transport.request(ApiCall("GET", str(created.name)))
        spec = document(version)["schemas"]["GoogleCloudAiplatformV1beta1EvaluationExperiment"]
        assert violations(served, spec, version) == []


def test_a_run_in_an_experiment_is_listed_in_it_and_a_missing_one_is_refused(
    client: Any,
) -> None:
    from factories import request_item

    item = client.create_item(request_item("x", candidates=[{"candidate": "a", "text": "hello"}]))
    evaluation_set = client.create_set(display_name="s", items=[item])
    experiment = client.create_experiment({"displayName": "prompt v3"})
    body = {
        "dataSource": {"evaluationSet": evaluation_set.name},
        "evaluationConfig": {"metrics": [{"metric": "exact_match"}]},
        "evaluationExperiment": experiment.name,
    }
    first, second = client.create_run(body), client.create_run(body)
    assert client.get_experiment(experiment.name).evaluation_runs == [first.name, second.name]
    missing = {**body, "evaluationExperiment": f"{client.parent}/evaluationExperiments/404"}
    with pytest.raises(errors.NotFound, match="evaluationExperiment"):
        client.create_run(missing)
    other = {**body, "evaluationExperiment": "projects/other/locations/x/evaluationExperiments/1"}
    with pytest.raises(errors.NotFound, match="evaluationExperiment"):
        client.create_run(other)
