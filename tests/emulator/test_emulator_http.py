"""The emulator as any HTTP client sees it: raw requests, status codes, google.rpc bodies."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from factories import request_item

from platform_eval import errors
from platform_eval.emulator import Emulator
from platform_eval.emulator.store import encode


@pytest.fixture
def base(emulator: Emulator, project: str) -> str:
    return f"{emulator.url}/v1beta1/projects/{project}/locations/us-central1"


def test_snake_case_input_is_accepted_and_camel_case_returned(base: str) -> None:
    body = {
        "display_name": "snake",
        "evaluation_item_type": "REQUEST",
        "evaluation_request": {
            "prompt": {"text": "hi"},
            "golden_response": {"text": "hello"},
            "candidate_responses": [
                {"candidate": "a", "agent_data": {"turns": [{"turn_index": 0, "events": []}]}}
            ],
        },
    }
    response = httpx.post(f"{base}/evaluationItems", json=body)
    assert response.status_code == 200, response.text
    created = response.json()
    assert created["displayName"] == "snake"
    assert created["evaluationRequest"]["goldenResponse"] == {"text": "hello"}
    assert (
        created["evaluationRequest"]["candidateResponses"][0]["agentData"]["turns"][0]["turnIndex"]
        == 0
    )
    assert "createTime" not in created  # as the service's create answer
    assert httpx.get(f"{base.split('/v1')[0]}/v1beta1/{created['name']}").json()["createTime"]
    assert "snake_case" not in created


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (
            {
                "displayName": "x",
                "evaluationItemType": "REQUEST",
                "evaluationRequest": {"promt": {}},
            },
            "promt",
        ),
        (
            {"displayName": "x", "evaluationItemType": "REQUEST", "evaluationRequest": {}},
            "needs a prompt",
        ),
        ([1, 2], "JSON object"),
    ],
)
def test_invalid_bodies_are_invalid_argument(base: str, body: object, needle: str) -> None:
    response = httpx.post(f"{base}/evaluationItems", json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT" and needle in error["message"]


def test_malformed_json_is_invalid_argument(base: str) -> None:
    response = httpx.post(
        f"{base}/evaluationItems",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "path",
    [
        "/v1beta1/projects/p/locations/l/evaluationWidgets",
        "/v1beta1/projects/p/locations/l/evaluationItems/1/extra",
        "/v2/projects/p/locations/l/evaluationItems",
        "/v1beta1/projects/p/locations/l/evaluationSets/1:cancel",
    ],
)
def test_unknown_paths_are_not_found(emulator: Emulator, path: str) -> None:
    response = httpx.request("POST" if path.endswith("cancel") else "GET", emulator.url + path)
    assert response.status_code == 404
    assert response.json()["error"]["status"] == "NOT_FOUND"


@pytest.mark.parametrize("rid", ["%2e%2e", "a%2Fb", "x" * 200, "-lead"])
def test_resource_ids_are_validated(base: str, rid: str) -> None:
    response = httpx.get(f"{base}/evaluationItems/{rid}")
    assert response.status_code in (400, 404)
    assert response.json()["error"]["status"] in ("INVALID_ARGUMENT", "NOT_FOUND")


def test_bad_project_is_rejected(emulator: Emulator) -> None:
    response = httpx.get(f"{emulator.url}/v1beta1/projects/UPPER_case!/locations/l/evaluationItems")
    assert response.status_code == 400


def _bodies(base: str) -> dict[str, dict[str, Any]]:
    item = httpx.post(f"{base}/evaluationItems", json=request_item("x")).json()
    members = {"displayName": "s", "evaluationItems": [item["name"]]}
    evaluation_set = httpx.post(f"{base}/evaluationSets", json=members).json()
    template = {"llmBasedMetricSpec": {"metricPromptTemplate": "Rate {response}."}}
    return {
        "evaluationItems": request_item("x"),
        "evaluationSets": members,
        "evaluationExperiments": {"displayName": "e"},
        "evaluationMetrics": {"displayName": "m", "metric": template},
        "evaluationRuns": {
            "displayName": "r",
            "dataSource": {"evaluationSet": evaluation_set["name"]},
            "evaluationConfig": {"metrics": [{"metric": "exact_match"}]},
        },
    }


@pytest.mark.parametrize(
    "collection",
    [
        "evaluationItems",
        "evaluationSets",
        "evaluationExperiments",
        "evaluationMetrics",
        "evaluationRuns",
    ],
)
def test_request_id_header_deduplicates(base: str, collection: str) -> None:
    body = _bodies(base)[collection]
    before = len(httpx.get(f"{base}/{collection}").json().get(collection, []))
    headers = {"x-platform-eval-request-id": "abc-123"}
    first = httpx.post(f"{base}/{collection}", json=body, headers=headers).json()
    # The repeat is answered with what the first created, whatever it carries this time.
    again = {**body, "displayName": "changed"}
    second = httpx.post(f"{base}/{collection}", json=again, headers=headers).json()
    # (A run's answer is the run as it is now: it may have run meanwhile.)
    assert second["name"] == first["name"] and second["displayName"] == body["displayName"]
    listed = httpx.get(f"{base}/{collection}").json()[collection]
    assert len(listed) == before + 1
    # Another request id creates another resource.
    other = {"x-platform-eval-request-id": "abc-124"}
    third = httpx.post(f"{base}/{collection}", json=body, headers=other).json()
    assert third["name"] != first["name"]


def test_page_size_is_capped_and_validated(base: str) -> None:
    assert httpx.get(f"{base}/evaluationItems", params={"pageSize": "x"}).status_code == 400
    assert httpx.get(f"{base}/evaluationItems", params={"pageSize": "-1"}).status_code == 400
    assert httpx.get(f"{base}/evaluationItems", params={"pageToken": "garbage"}).status_code == 400


def test_fault_control_endpoint(emulator: Emulator, base: str) -> None:
    control = f"{emulator.url}/_emulator/faults"
    assert (
        httpx.post(control, json={"path": "evaluationSets", "status": 503, "times": 2}).status_code
        == 200
    )
    assert httpx.post(control, json={"kind": "explode"}).status_code == 400
    assert httpx.post(control, json={"pth": "x"}).status_code == 400
    assert len(httpx.get(control).json()["faults"]) == 1
    assert httpx.get(f"{base}/evaluationSets").status_code == 503
    assert httpx.get(f"{base}/evaluationSets").status_code == 503
    assert httpx.get(f"{base}/evaluationSets").status_code == 200
    assert httpx.get(control).json()["faults"] == []


def test_health_and_reset(project: str) -> None:
    with Emulator() as emu:
        base = f"{emu.url}/v1beta1/projects/{project}/locations/us-central1"
        httpx.post(f"{base}/evaluationItems", json=request_item("x"))
        assert httpx.get(f"{emu.url}/_emulator/health").json() == {
            "status": "ok",
            "executor": {"state": "running"},
        }
        assert httpx.post(f"{emu.url}/_emulator/reset").status_code == 200
        assert httpx.get(f"{base}/evaluationItems").json() == {"evaluationItems": []}


def test_data_survives_a_restart_on_the_same_file(tmp_path: Path) -> None:
    db = str(tmp_path / "evals.sqlite")
    with Emulator(db=db) as emu, emu.client() as client:
        item = client.create_item(request_item("kept"))
    with Emulator(db=db) as emu, emu.client() as client:
        assert client.get_item(item.name).display_name == "kept"


def test_unfinished_run_resumes_after_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "evals.sqlite")
    item = request_item("x", golden={"text": "x"}, candidates=[{"candidate": "a", "text": "x"}])
    first = Emulator(db=db).start()
    with first.client() as client:
        evaluation_set = client.create_set(display_name="s", items=[client.create_item(item)])
        with first.executor.paused():
            run = client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
            first.stop()  # the executor never started the run
        first.store.close()
    with Emulator(db=db) as emu, emu.client() as client:
        done = client.wait_for_run(run.name, timeout=30, poll_interval=0.02)
        assert done.state == "SUCCEEDED"
        assert done.summary["a/exact_match/AVERAGE"] == 1.0


def _thousand_items(client: object, count: int = 1000) -> object:
    """A set of ``count`` items, each with a candidate that answers its golden response (a run
    with nothing to score fails, as the service's does), imported in one call."""
    items = [
        request_item(
            f"c{i}",
            prompt=f"q{i}",
            golden={"text": f"answer {i}"},
            candidates=[{"candidate": "agent", "text": f"answer {i}"}],
        )
        for i in range(count)
    ]
    # A bucket of the client's project's own (a bucket belongs to the first project using it).
    project = client.parent.split("/")[1]  # type: ignore[attr-defined]
    imported = client.import_set(  # type: ignore[attr-defined]
        items, display_name="thousand", gcs_destination=f"gs://thousand-{project}/payloads"
    )
    return imported.result(timeout=60)


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_a_long_run_reports_progress_and_survives_a_restart_mid_way(tmp_path: Path) -> None:
    db = str(tmp_path / "evals.sqlite")
    first = Emulator(db=db).start()
    with first.client() as client:
        evaluation_set = _thousand_items(client)
        with first.executor.paused(after_items=400):
            run = client.create_run(evaluation_set=evaluation_set, metrics=["response_match_score"])
            assert first.executor.wait_until_held()
            running = client.get_run(run)
            assert running.state == "RUNNING"
            # Progress is not written into the run: its metadata is the service's pipeline id.
            assert set(running.metadata) == {"pipeline_id"}
            assert client.run_progress(running) == (400, 1000)
            first.stop()  # the emulator goes away with the run RUNNING, 400 results written
        first.store.close()
    with Emulator(db=db) as second, second.client() as client:
        done = client.wait_for_run(run.name, timeout=60, poll_interval=0.05)
        assert done.state == "SUCCEEDED"
        assert client.run_progress(done) == (1000, 1000)
        assert done.evaluation_results.summary_metrics.total_items == 1000
        results = client.get_results(done)
        assert len(results) == 1000
        # The 400 results from before the restart were kept, not computed twice.
        for_run = list(client.list_items(filter=f'evaluation_run = "{done.name}"', page_size=1000))
        assert len(for_run) == 1000
        requests = [r.evaluation_response.evaluation_request for r in results]
        assert len(set(requests)) == 1000


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
def test_a_long_run_cancelled_mid_way_keeps_its_results(emulator: Emulator, project: str) -> None:
    with emulator.client(project) as client:
        evaluation_set = _thousand_items(client)
        with emulator.executor.paused(after_items=250):
            run = client.create_run(evaluation_set=evaluation_set, metrics=["response_match_score"])
            assert emulator.executor.wait_until_held()
            client.cancel_run(run)
            # A cancel takes effect at the next item: the run is still RUNNING until then.
            assert client.get_run(run).state == "RUNNING"
        done = client.wait_for_run(run, timeout=60, poll_interval=0.05)
        assert done.state == "CANCELLED"
        assert client.run_progress(done) == (250, 1000)
        assert len(client.get_results(done)) == 250
        assert done.evaluation_results.summary_metrics.total_items == 250


def test_an_accepted_cancel_survives_a_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "evals.sqlite")
    first = Emulator(db=db).start()
    with first.client() as client:
        evaluation_set = _thousand_items(client, 300)
        with first.executor.paused(after_items=100):
            run = client.create_run(evaluation_set=evaluation_set, metrics=["response_match_score"])
            assert first.executor.wait_until_held()
            client.cancel_run(run)  # accepted; takes effect at the next item boundary
            first.stop()  # ...which the emulator never reaches before it goes away
        first.store.close()
    with Emulator(db=db) as second, second.client() as client:
        done = client.wait_for_run(run.name, timeout=60, poll_interval=0.05)
        assert done.state == "CANCELLED"
        assert done.error is not None and done.error.code == 1
        # The 100 results written before the restart stay with the cancelled run.
        assert len(client.get_results(done)) == 100


def test_deleting_a_running_run_stops_it_and_removes_its_partial_results(
    emulator: Emulator, project: str
) -> None:
    with emulator.client(project) as client:
        evaluation_set = _thousand_items(client, 300)
        with emulator.executor.paused(after_items=50):
            run = client.create_run(evaluation_set=evaluation_set, metrics=["response_match_score"])
            assert emulator.executor.wait_until_held()
            client.delete_run(run)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            left = list(client.list_items(filter="evaluation_item_type = RESULT", page_size=1000))
            if not left:
                break
            time.sleep(0.05)
        assert left == []
        assert [s.name for s in client.list_sets()] == [evaluation_set.name]
        with pytest.raises(errors.NotFound):
            client.get_run(run.name)


def test_the_store_encodes_what_json_encodes() -> None:
    # pydantic-core writes the stored text; what it cannot write goes through json, as before.
    body = {"a": 2**70, "b": 1e-7, "c": "é", "d": [True, None, 0.1]}
    assert json.loads(encode(body)) == body
    assert encode({"x": "\ud800"}) == '{"x":"\ud800"}'
    with pytest.raises(TypeError):
        encode({"x": object()})
