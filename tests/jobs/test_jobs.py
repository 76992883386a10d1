"""Bulk jobs against the emulator: resumable, exactly once, failures reported per item."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, FAST_RETRY
from paths import TESTS

from platform_eval import Client, jobs
from platform_eval import types as t
from platform_eval.emulator import Emulator
from platform_eval.formats import adk
from platform_eval.jobs.upload import SET_LABEL

TRAJECTORY = CORPUS / "adk/ayushworks__adk-eval-workshop__eval__trajectory.evalset.json"
HELM_SET = CORPUS / "agentevals/samples_eval_set_helm.json"
HELM = CORPUS / "agentevals/samples_helm.json"
K8S = CORPUS / "agentevals/samples_k8s.json"


def _eval_set(count: int, prefix: str = "case") -> adk.EvalSet:
    return adk.EvalSet.model_validate(
        {
            "eval_set_id": "generated",
            "eval_cases": [
                {
                    "eval_id": f"{prefix}-{i}",
                    "conversation": [{"user_content": {"parts": [{"text": f"question {i}"}]}}],
                }
                for i in range(count)
            ],
        }
    )


def _items_by_case(client: Client) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in client.list_items(page_size=500):
        case = (item.metadata or {}).get("evalCaseId")
        counts[case] = counts.get(case, 0) + 1
    return counts


@pytest.mark.corpus
def test_upload_eval_set_file_and_rerun_creates_nothing_twice(
    sync_client: Client, tmp_path: Path
) -> None:
    seen: list[jobs.Progress] = []
    report = jobs.UploadReport()
    evaluation_set = jobs.upload_eval_set(
        sync_client,
        TRAJECTORY,
        manifest=tmp_path / "m.jsonl",
        on_progress=seen.append,
        report=report,
    )
    assert isinstance(evaluation_set, t.EvaluationSet)
    assert len(report.items) == 5 and not report.failures
    assert seen[0] == jobs.Progress(done=0, failed=0, total=5) and seen[-1].done == 5
    assert evaluation_set.evaluation_items == report.items
    assert report.summary().startswith("5 items uploaded")
    again_report = jobs.UploadReport()
    again = jobs.upload_eval_set(
        sync_client, TRAJECTORY, manifest=tmp_path / "m.jsonl", report=again_report
    )
    assert again_report.resumed == 5
    assert again.name == evaluation_set.name
    assert sorted(_items_by_case(sync_client).values()) == [1] * 5


def _upload_in_a_child(
    emulator: Emulator, project: str, count: int, manifest: Path, mode: str
) -> subprocess.Popen[bytes]:
    """``count`` cases uploaded by another process (``mode``: create or import), to be killed."""
    env = {
        **os.environ,
        "PLATFORM_EVAL_EMULATOR_HOST": emulator.host_port,
        "GOOGLE_CLOUD_PROJECT": project,
    }
    child_script = str(TESTS / "_upload_child.py")
    return subprocess.Popen(
        [sys.executable, child_script, str(count), str(manifest), mode], env=env
    )


@pytest.mark.slow
def test_interrupted_upload_resumes_and_ends_with_every_item_exactly_once(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "big.jsonl"
    count = 400
    # Slow every create down so that the kill lands mid-way, with creates in flight.
    emulator.inject_fault(
        path=f"projects/{project}/evaluationItems",
        method="POST",
        kind="delay",
        delay=0.01,
        times=count,
    )
    child = _upload_in_a_child(emulator, project, count, manifest, "create")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = manifest.read_text().count('"item"') if manifest.exists() else 0
        if lines >= 30:
            break
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    interrupted_at = manifest.read_text().count('"item"')
    assert 0 < interrupted_at < count, "the child finished before it could be interrupted"

    with emulator.client(project, retry=FAST_RETRY) as client:
        report = jobs.UploadReport()
        evaluation_set = jobs.upload_eval_set(
            client, _eval_set(count), manifest=manifest, report=report
        )
        # The target is the truth: creates whose answers the kill cut off count as there too.
        assert report.resumed >= interrupted_at
        counts = _items_by_case(client)
        assert len(counts) == count and set(counts.values()) == {1}
        # The set lists every case once, in the order of the eval set.
        members = evaluation_set.evaluation_items
        assert len(members) == count
        for index in (0, count // 2, count - 1):
            assert client.get_item(members[index]).metadata["evalCaseId"] == f"case-{index}"


@pytest.mark.slow
@pytest.mark.serial  # waits on a killed process's import within a deadline
def test_an_upload_killed_during_its_import_ends_with_every_item_exactly_once(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "import.jsonl"
    count = 200
    # Hold the import long enough to kill the uploader while it waits for the answer.
    emulator.inject_fault(path="evaluationSets:import", method="POST", kind="delay", delay=1.0)
    child = _upload_in_a_child(emulator, project, count, manifest, "import")
    deadline = time.monotonic() + 60
    while emulator.pending_faults() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert not emulator.pending_faults(), "the import never reached the emulator"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    # The emulator finishes the import the killed uploader asked for: wait for its set.
    with emulator.client(project, retry=FAST_RETRY) as client:
        deadline = time.monotonic() + 30
        while not list(client.list_sets()):
            assert time.monotonic() < deadline, "the import never finished"
            time.sleep(0.02)

    with emulator.client(project, retry=FAST_RETRY) as client:
        report = jobs.UploadReport()
        evaluation_set = jobs.upload_eval_set(
            client, _eval_set(count), manifest=manifest, report=report
        )
        # The import landed though its answer was lost: found by label, nothing made twice.
        assert report.resumed == count
        counts = _items_by_case(client)
        assert len(counts) == count and set(counts.values()) == {1}
        members = evaluation_set.evaluation_items
        assert len(members) == count
        assert client.get_item(members[-1]).metadata["evalCaseId"] == f"case-{count - 1}"
        # The set the killed import made on the way is gone; only the upload's set is left.
        assert [s.name for s in client.list_sets()] == [evaluation_set.name]


def test_a_set_that_fits_one_import_is_made_by_it_with_nothing_made_on_the_way(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    """One import makes the upload's own set: no second set is created, none deleted (each
    would be a round trip of its own); the set is the one a re-upload finds."""
    # Faults that fire only if the upload creates a set itself or deletes one.
    emulator.inject_fault(path="/evaluationSets/", method="DELETE", status=500, times=1)
    with emulator.client(project, retry=FAST_RETRY) as client:
        evaluation_set = jobs.upload_eval_set(client, _eval_set(6), manifest=tmp_path / "m.jsonl")
        assert len(emulator.pending_faults()) == 1, "a set was deleted on the way"
        sets = list(client.list_sets())
        assert [s.name for s in sets] == [evaluation_set.name]
        assert sets[0].display_name == evaluation_set.display_name
        assert "(import part)" not in (sets[0].display_name or "")
        assert sorted(_items_by_case(client).values()) == [1] * 6
        emulator.faults.clear()
        again = jobs.upload_eval_set(client, _eval_set(6), manifest=tmp_path / "other.jsonl")
        assert again.name == evaluation_set.name
        assert again.evaluation_items == evaluation_set.evaluation_items


def test_creates_lost_before_the_manifest_was_written_are_recovered(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "m.jsonl"
    with emulator.client(project, retry=FAST_RETRY) as client:
        jobs.upload_eval_set(client, _eval_set(3), manifest=manifest)
        # Forget one created item, as a crash between the create and the manifest write would.
        lines = manifest.read_text().splitlines()
        kept = [line for line in lines if '"case-1"' not in line and "generated/case-1" not in line]
        kept = [line for line in kept if '"set"' not in line]
        manifest.write_text("\n".join(kept) + "\n")
        report = jobs.UploadReport()
        jobs.upload_eval_set(client, _eval_set(3), manifest=manifest, report=report)
        assert report.resumed == 3
        assert sorted(_items_by_case(client).values()) == [1, 1, 1]
        labels = [i.labels[SET_LABEL] for i in client.list_items()]
        assert len(set(labels)) == 1


def test_permanent_failures_are_reported_per_item_and_the_rest_uploaded(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "m.jsonl"
    with emulator.client(project, retry=FAST_RETRY) as client:
        emulator.inject_fault(path="evaluationItems", method="POST", status=400, times=2)
        with pytest.raises(jobs.UploadIncompleteError) as caught:
            jobs.upload_eval_set(
                client, _eval_set(6), manifest=manifest, concurrency=1, bulk_import=False
            )
        report = caught.value.report
        assert len(report.failures) == 2
        assert all("injected fault" in f.reason for f in report.failures)
        assert len(report.items) == 4
        assert "not created or changed because some items failed" in report.notes[-1]
        assert "2 items failed, 4 uploaded" in str(caught.value)
        retry = jobs.upload_eval_set(client, _eval_set(6), manifest=manifest)
        assert len(retry.evaluation_items) == 6
        assert sorted(_items_by_case(client).values()) == [1] * 6


def test_allow_partial_creates_the_set_from_what_uploaded(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    with emulator.client(project, retry=FAST_RETRY) as client:
        emulator.inject_fault(path="evaluationItems", method="POST", status=400, times=1)
        report = jobs.UploadReport()
        evaluation_set = jobs.upload_eval_set(
            client,
            _eval_set(3),
            manifest=tmp_path / "m.jsonl",
            allow_partial=True,
            concurrency=1,
            report=report,
            bulk_import=False,
        )
        assert len(report.failures) == 1
        assert len(evaluation_set.evaluation_items) == 2


def test_transient_failures_say_so(emulator: Emulator, project: str, tmp_path: Path) -> None:
    with emulator.client(project, retry=FAST_RETRY) as client:
        emulator.inject_fault(path="evaluationItems", method="POST", status=503, times=4)
        with pytest.raises(jobs.UploadIncompleteError) as caught:
            jobs.upload_eval_set(
                client, _eval_set(1), manifest=tmp_path / "m.jsonl", bulk_import=False
            )
        assert "transient: re-run to retry" in caught.value.report.failures[0].reason


@pytest.mark.parametrize(
    "fault",
    [
        # A target without the method: every item is created one by one.
        {"status": 501},
        # The import landed but its answer was lost (retries get the first operation back
        # from the emulator, so the loss is final only after them): found by label.
        {"kind": "drop_after", "times": 10},
    ],
)
def test_an_import_that_fails_falls_back_to_creates_without_duplicates(
    emulator: Emulator, project: str, tmp_path: Path, fault: dict[str, Any]
) -> None:
    emulator.inject_fault(path="evaluationSets:import", method="POST", **fault)
    with emulator.client(project, retry=FAST_RETRY) as client:
        report = jobs.UploadReport()
        evaluation_set = jobs.upload_eval_set(
            client, _eval_set(5), manifest=tmp_path / "m.jsonl", report=report
        )
        assert len(evaluation_set.evaluation_items) == 5
        assert sorted(_items_by_case(client).values()) == [1] * 5
        assert [s.name for s in client.list_sets()] == [evaluation_set.name]


def test_an_import_that_never_finishes_is_given_up_and_every_item_is_there_once(
    emulator: Emulator, project: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import whose operation never ends (a fault the emulator cannot provoke: its imports
    end at once, so the operation is kept RUNNING here) holds the upload no longer than
    PLATFORM_EVAL_IMPORT_WAIT; the items it made are found by label, none twice."""
    from platform_eval import AsyncClient
    from platform_eval.types import Operation

    real = AsyncClient.import_set
    polls: list[str] = []

    async def never_done(self: AsyncClient, *args: Any, **kwargs: Any) -> Any:
        future = await real(self, *args, **kwargs)
        running = Operation(name=future.operation.name, done=False)

        async def refresh(name: str) -> Operation:
            polls.append(name)
            return running

        future.operation, future._refresh = running, refresh
        return future

    monkeypatch.setattr(AsyncClient, "import_set", never_done)
    monkeypatch.setenv("PLATFORM_EVAL_IMPORT_WAIT", "0.5")
    with emulator.client(project, retry=FAST_RETRY) as client:
        report = jobs.UploadReport()
        evaluation_set = jobs.upload_eval_set(
            client, _eval_set(6), manifest=tmp_path / "m.jsonl", report=report
        )
        assert polls, "the import was waited for"
        assert len(evaluation_set.evaluation_items) == 6
        assert sorted(_items_by_case(client).values()) == [1] * 6
        assert not report.failures


def test_a_fresh_upload_is_one_import_and_a_rerun_creates_nothing(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "m.jsonl"
    with emulator.client(project, retry=FAST_RETRY) as client:
        # Any create of an item would fail: everything goes through the import.
        emulator.inject_fault(path="evaluationItems", method="POST", status=400, times=100)
        evaluation_set = jobs.upload_eval_set(client, _eval_set(40), manifest=manifest)
        assert len(evaluation_set.evaluation_items) == 40
        assert manifest.read_text().count('"item"') == 40
        again = jobs.UploadReport()
        jobs.upload_eval_set(client, _eval_set(40), manifest=manifest, report=again)
        assert again.resumed == 40
        assert sorted(_items_by_case(client).values()) == [1] * 40
        # The import's own set was a step on the way: only the upload's set is left.
        assert [s.name for s in client.list_sets()] == [evaluation_set.name]
        first = client.get_item(evaluation_set.evaluation_items[0])
        assert first.gcs_uri.startswith(f"gs://{project}-platform-eval/imports/")
        assert first.metadata["evalCaseId"] == "case-0"


def test_manifest_of_another_project_is_refused(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    from platform_eval.formats import FormatError

    manifest = tmp_path / "m.jsonl"
    with emulator.client(project) as client:
        jobs.upload_eval_set(client, _eval_set(1), manifest=manifest)
    with emulator.client(project + "-b") as other, pytest.raises(FormatError, match="belongs to"):
        jobs.upload_eval_set(other, _eval_set(1), manifest=manifest)


@pytest.mark.corpus
def test_upload_traces_as_candidates_and_evaluate(sync_client: Client, tmp_path: Path) -> None:
    report = jobs.UploadReport()
    uploaded = jobs.upload_traces(
        sync_client,
        HELM_SET,
        [HELM, K8S],
        candidate="prod",
        manifest=tmp_path / "t.jsonl",
        report=report,
    )
    assert report.matches is not None and report.matches.ambiguous
    item = sync_client.get_item(uploaded.evaluation_items[0])
    candidates = item.evaluation_request.candidate_responses
    assert [c.candidate for c in candidates] == ["prod#1", "prod#2"]
    assert (
        candidates[0].agent_data.turns[0].events[1].content.parts[0].function_call.name
        == "helm_list_releases"
    )

    outcome = jobs.evaluate(
        sync_client,
        HELM_SET,
        traces=[HELM, K8S],
        metrics=["tool_trajectory_avg_score"],
        manifest=tmp_path / "e.jsonl",
        poll_interval=0.02,
        timeout=60,
    )
    assert outcome.run.state == "SUCCEEDED"
    scores = {
        r.candidate: r.score for r in outcome.results[0].evaluation_response.candidate_results
    }
    assert scores == {"agent#1": 1.0, "agent#2": 0.0}


@pytest.mark.corpus
def test_evaluate_with_a_config_uses_its_criteria_and_thresholds(
    sync_client: Client, tmp_path: Path
) -> None:
    config = tmp_path / "test_config.json"
    config.write_text(
        json.dumps(
            {
                "criteria": {
                    "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"}
                }
            }
        )
    )
    outcome = jobs.evaluate(
        sync_client,
        HELM_SET,
        traces=[HELM],
        config=config,
        manifest=tmp_path / "e.jsonl",
        poll_interval=0.02,
        timeout=60,
    )
    assert outcome.thresholds == {"tool_trajectory_avg_score": 1.0}
    metric = outcome.run.evaluation_config.metrics[0]
    assert metric.computation_based_metric_spec.parameters == {"match_type": "IN_ORDER"}
    # Each trace's candidate averages 1.0 (the summary is keyed by candidate).
    averages = [
        v
        for k, v in outcome.run.summary.items()
        if k.endswith("/tool_trajectory_avg_score/AVERAGE")
    ]
    assert averages and all(v == 1.0 for v in averages)


@pytest.mark.corpus
@pytest.mark.anyio
async def test_jobs_with_an_async_client(emulator: Emulator, project: str, tmp_path: Path) -> None:
    async with emulator.async_client(project) as client:
        evaluation_set: Any = await jobs.upload_eval_set(
            client, TRAJECTORY, manifest=tmp_path / "m.jsonl"
        )
        assert len(evaluation_set.evaluation_items) == 5


@pytest.mark.corpus
def test_default_manifests_keep_eval_sets_and_traces_apart(
    sync_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    plain = jobs.upload_eval_set(sync_client, HELM_SET)
    with_helm = jobs.upload_traces(sync_client, HELM_SET, [HELM])
    with_k8s = jobs.upload_traces(sync_client, HELM_SET, [K8S])
    report = jobs.UploadReport()
    again = jobs.upload_traces(sync_client, HELM_SET, [K8S], report=report)
    assert (tmp_path / ".platform-eval" / "manifests").is_dir()
    names = {plain.evaluation_items[0], with_helm.evaluation_items[0], with_k8s.evaluation_items[0]}
    assert len(names) == 3  # the plain case and each set of traces are distinct items
    assert again.evaluation_items == with_k8s.evaluation_items and report.resumed == 1
    # One set per candidate name, pointed at the latest traces.
    assert with_k8s.name == with_helm.name


@pytest.mark.corpus
@pytest.mark.anyio
async def test_sync_jobs_work_inside_a_running_event_loop(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    with emulator.client(project) as client:
        evaluation_set = jobs.upload_eval_set(client, TRAJECTORY, manifest=tmp_path / "m.jsonl")
    assert len(evaluation_set.evaluation_items) == 5


def test_a_journal_naming_another_set_leaves_that_set_alone(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    """An edited (or copied) journal that names a set this upload did not make: that set
    keeps its items, and the upload makes or finds its own."""
    manifest = tmp_path / "m.jsonl"
    with emulator.client(project) as client:
        other_item = client.create_item(
            {
                "displayName": "theirs",
                "evaluationItemType": "REQUEST",
                "evaluationRequest": {"prompt": {"text": "q"}},
            }
        )
        theirs = client.create_set(display_name="someone else's", items=[other_item])
        report = jobs.UploadReport()
        ours = jobs.upload_eval_set(client, _eval_set(2), manifest=manifest, report=report)
        # Point the journal's record of our set at theirs, as a hand edit would.
        lines = manifest.read_text().splitlines()
        edited = [line.replace(ours.name, theirs.name) for line in lines]
        manifest.write_text("\n".join(edited) + "\n")
        again = jobs.UploadReport()
        rerun = jobs.upload_eval_set(client, _eval_set(2), manifest=manifest, report=again)
        assert client.get_set(theirs.name).evaluation_items == [other_item.name]
        assert rerun.name != theirs.name
        assert any("not this upload's set" in note for note in again.notes)


def test_an_eval_set_with_no_cases_is_refused_before_anything_is_sent(
    sync_client: Client, tmp_path: Path
) -> None:
    # An evaluation set must hold at least one item: said about the file, not by a 400.
    empty = tmp_path / "empty.evalset.json"
    empty.write_text(json.dumps({"eval_set_id": "empty", "eval_cases": []}))
    from platform_eval.formats import FormatError

    with pytest.raises(FormatError, match=r"\$\.eval_cases: has no cases"):
        jobs.upload_eval_set(sync_client, empty, manifest=tmp_path / "m.jsonl")
    assert list(sync_client.list_sets()) == [] and list(sync_client.list_items()) == []


def test_a_sync_job_never_formats_its_result(emulator: Emulator, project: str) -> None:
    """asyncio.run formats the repr of its finished task, result included, when it puts the
    SIGINT handler back: the result of an evaluation of 200 cases took 0.3 s to
    format, after the work was done. A sync job's result is never formatted."""
    from platform_eval._sync import run_or_defer

    formatted: list[str] = []

    class Large:
        def __repr__(self) -> str:
            formatted.append("repr")
            return "Large(...)"

    async def job(client: Any) -> Large:
        return Large()

    with emulator.client(project) as client:
        result = run_or_defer(client, job)
    assert isinstance(result, Large) and formatted == []
