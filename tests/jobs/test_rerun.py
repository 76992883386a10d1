"""Re-runs as users make them: the target is the truth, the manifest only a journal of hints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FAST_RETRY

from platform_eval import Client, RetryPolicy, errors, jobs
from platform_eval.emulator import Emulator
from platform_eval.formats import adk

NO_RETRY = RetryPolicy(max_retries=0)


def _eval_set(answers: dict[str, str], eval_set_id: str = "golden") -> adk.EvalSet:
    return adk.EvalSet.model_validate(
        {
            "eval_set_id": eval_set_id,
            "eval_cases": [
                {
                    "eval_id": eval_id,
                    "conversation": [
                        {
                            "user_content": {"parts": [{"text": f"question {eval_id}"}]},
                            "final_response": {"parts": [{"text": answer}]},
                        }
                    ],
                }
                for eval_id, answer in answers.items()
            ],
        }
    )


def _write(path: Path, answers: dict[str, str]) -> Path:
    path.write_text(_eval_set(answers).model_dump_json(exclude_none=True))
    return path


def _golden_text(client: Client, name: str) -> str:
    item = client.get_item(name)
    return (
        item.evaluation_request.golden_response.agent_data.turns[-1]
        .events[-1]
        .content.parts[0]
        .text
    )


def _all_items(client: Client) -> list[Any]:
    return list(client.list_items(page_size=1000))


ANSWERS = {"a": "alpha", "b": "beta", "c": "gamma"}


def test_rerun_against_a_fresh_target_creates_everything_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, manifest = _write(tmp_path / "golden.evalset.json", ANSWERS), tmp_path / "m.jsonl"
    with Emulator() as first, first.client("p") as client:
        jobs.upload_eval_set(client, source, manifest=manifest)
    # A new emulator knows nothing of the set the manifest remembers.
    with Emulator() as fresh, fresh.client("p") as client:
        report = jobs.UploadReport()
        evaluation_set = jobs.upload_eval_set(client, source, manifest=manifest, report=report)
        assert (
            client.get_set(evaluation_set.name).evaluation_items == evaluation_set.evaluation_items
        )
        assert len(evaluation_set.evaluation_items) == 3
        assert report.resumed == 0
        assert any("gone from the target" in note for note in report.notes)


def test_deleted_set_and_items_are_made_again(sync_client: Client, tmp_path: Path) -> None:
    source, manifest = _write(tmp_path / "golden.evalset.json", ANSWERS), tmp_path / "m.jsonl"
    first = jobs.upload_eval_set(sync_client, source, manifest=manifest)
    sync_client.delete_set(first.name)
    sync_client.delete_item(first.evaluation_items[1])
    again = jobs.upload_eval_set(sync_client, source, manifest=manifest)
    assert again.name != first.name
    assert again.evaluation_items[0] == first.evaluation_items[0]
    assert again.evaluation_items[1] != first.evaluation_items[1]
    assert len(_all_items(sync_client)) == 3


def test_an_edited_golden_answer_replaces_its_item_and_only_that(
    sync_client: Client, tmp_path: Path
) -> None:
    source, manifest = _write(tmp_path / "golden.evalset.json", ANSWERS), tmp_path / "m.jsonl"
    first = jobs.upload_eval_set(sync_client, source, manifest=manifest)
    _write(source, {**ANSWERS, "b": "BETA, edited"})
    report = jobs.UploadReport()
    again = jobs.upload_eval_set(sync_client, source, manifest=manifest, report=report)
    assert again.name == first.name
    assert report.resumed == 2 and report.removed == 1
    assert again.evaluation_items[0] == first.evaluation_items[0]
    assert again.evaluation_items[2] == first.evaluation_items[2]
    assert _golden_text(sync_client, again.evaluation_items[1]) == "BETA, edited"
    assert sync_client.get_set(first.name).evaluation_items == again.evaluation_items
    # The replaced item left the set but stays on the target, for earlier runs' results.
    assert len(_all_items(sync_client)) == 4
    assert first.evaluation_items[1] not in again.evaluation_items
    # Said once, in the summary; and an unchanged re-run takes nothing out (the item taken out
    # before is still on the target, labelled: not counted again).
    assert report.summary().count("taken out") == 1
    third = jobs.UploadReport()
    jobs.upload_eval_set(sync_client, source, manifest=manifest, report=third)
    assert third.removed == 0 and "taken out" not in third.summary()


def test_cases_added_and_removed_in_the_file_follow_it(sync_client: Client, tmp_path: Path) -> None:
    source, manifest = _write(tmp_path / "golden.evalset.json", ANSWERS), tmp_path / "m.jsonl"
    jobs.upload_eval_set(sync_client, source, manifest=manifest)
    _write(source, {"c": "gamma", "d": "delta"})
    again = jobs.upload_eval_set(sync_client, source, manifest=manifest)
    cases = [sync_client.get_item(n).metadata["evalCaseId"] for n in again.evaluation_items]
    assert cases == ["c", "d"]
    assert sync_client.get_set(again.name).evaluation_items == again.evaluation_items


def test_the_same_file_from_two_folders_creates_nothing_twice(
    sync_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = []
    for folder in ("one", "two"):
        where = tmp_path / folder
        where.mkdir()
        monkeypatch.chdir(where)
        source = _write(where / "golden.evalset.json", ANSWERS)
        results.append(jobs.upload_eval_set(sync_client, source))
    assert results[0].name == results[1].name
    assert results[0].evaluation_items == results[1].evaluation_items
    assert len(_all_items(sync_client)) == 3
    assert len(list(sync_client.list_sets())) == 1


def test_a_lost_set_create_answer_never_yields_a_second_set(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    # No retries, as against a service that does not deduplicate creates: the lost answer
    # surfaces, and the job looks for the set before anyone makes a second one.
    with emulator.client(project, retry=NO_RETRY) as client:
        emulator.inject_fault(path="evaluationSets", method="POST", kind="drop_after", times=1)
        evaluation_set = jobs.upload_eval_set(
            client, _eval_set(ANSWERS), manifest=tmp_path / "m.jsonl"
        )
        assert len(list(client.list_sets())) == 1
        assert (
            client.get_set(evaluation_set.name).evaluation_items == evaluation_set.evaluation_items
        )
        # A later run with no manifest at all still finds it by its marker.
        again = jobs.upload_eval_set(client, _eval_set(ANSWERS), manifest=tmp_path / "new.jsonl")
        assert again.name == evaluation_set.name
        assert len(list(client.list_sets())) == 1


@pytest.mark.parametrize(
    "damage",
    [
        '{"key": "a#0", "ite',  # cut mid-line by a crash, no newline
        '[1, 2, 3]\n{"key": 5, "item": null}\n"text"\n',  # wrong-shaped lines
        "\xff\xfe not utf-8\n",
        "[" * 5000 + "\n",  # deeper than the JSON parser recurses
    ],
)
def test_a_damaged_manifest_never_breaks_the_job(
    sync_client: Client, tmp_path: Path, damage: str
) -> None:
    manifest = tmp_path / "m.jsonl"
    first = jobs.upload_eval_set(sync_client, _eval_set(ANSWERS), manifest=manifest)
    with manifest.open("a", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write(damage)
    # One more case, so the re-run appends a line after the damage.
    again = jobs.upload_eval_set(
        sync_client, _eval_set({**ANSWERS, "d": "delta"}), manifest=manifest
    )
    assert again.name == first.name and again.evaluation_items[:3] == first.evaluation_items
    journal = jobs.Manifest(manifest, parent=sync_client.parent, source="x")
    assert journal.sets and journal.unreadable_lines >= 1
    assert (
        journal.items[next(k for k in journal.items if k.startswith("d#"))]
        == again.evaluation_items[3]
    )
    # Nothing was glued onto the damaged line: the appended line reads on its own.
    lines = manifest.read_bytes().rstrip(b"\n").split(b"\n")
    assert json.loads(lines[-1])["item"] == again.evaluation_items[3]


def test_a_cut_header_does_not_block_the_job(sync_client: Client, tmp_path: Path) -> None:
    manifest = tmp_path / "m.jsonl"
    manifest.write_text('{"manifest": 2, "par')
    evaluation_set = jobs.upload_eval_set(sync_client, _eval_set(ANSWERS), manifest=manifest)
    assert len(evaluation_set.evaluation_items) == 3


@pytest.mark.slow
def test_evaluate_after_a_timeout_attaches_to_its_run(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    answers = {f"case-{i}": f"answer {i}" for i in range(300)}
    source = _write(tmp_path / "golden.evalset.json", answers)
    manifest = tmp_path / "m.jsonl"
    with emulator.client(project, retry=FAST_RETRY) as client:
        with pytest.raises(errors.WaitTimeoutError):
            jobs.evaluate(client, source, metrics=["rouge_1"], manifest=manifest, timeout=0.001)
        evaluation = jobs.evaluate(client, source, metrics=["rouge_1"], manifest=manifest)
        assert evaluation.attached
        assert len(list(client.list_runs())) == 1
        assert len(evaluation.results) == 300
        # Once its results were read, the next evaluation is a run of its own.
        third = jobs.evaluate(client, source, metrics=["rouge_1"], manifest=manifest)
        assert not third.attached
        assert len(list(client.list_runs())) == 2


def test_a_name_the_journal_remembers_never_reaches_the_set(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "m.jsonl"
    with emulator.client(project, retry=FAST_RETRY) as client:
        first = jobs.upload_eval_set(client, _eval_set(ANSWERS), manifest=manifest)
        client.delete_item(first.evaluation_items[0])  # the journal still names it
        emulator.inject_fault(path="evaluationItems", method="POST", status=400, times=1)
        again = jobs.upload_eval_set(
            client, _eval_set(ANSWERS), manifest=manifest, allow_partial=True
        )
        assert again.evaluation_items == first.evaluation_items[1:]


def test_an_import_that_never_finishes_ends_the_upload_at_its_bound_with_what_it_made(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    """The import is made and its operation is never reported done (over HTTP): the upload
    stops waiting at its bound and keeps the items the import created, each once."""
    with emulator.client(project, retry=FAST_RETRY) as client:
        emulator.inject_fault(path=":import", method="POST", kind="unfinished")
        emulator.inject_fault(path="/operations/", kind="unfinished", times=1_000_000)
        with jobs.waiting_at_most(0.5):
            evaluation_set = jobs.upload_eval_set(
                client, _eval_set(ANSWERS), manifest=tmp_path / "m.jsonl"
            )
        # The import was made and answered unfinished (whether the bound left time to poll it
        # depends on the machine's speed, so that is not asserted).
        assert [f["path"] for f in emulator.faults.pending()] == ["/operations/"]
        assert len(evaluation_set.evaluation_items) == len(ANSWERS)
        assert len(_all_items(client)) == len(ANSWERS)


def test_an_import_still_running_at_the_bound_fails_its_items_and_creates_no_copies(
    emulator: Emulator, project: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import that has created nothing yet and never ends (the emulator's end at once: the
    operation is made up here): its items are not created one by one, which would leave second
    copies when it ends; the upload names the operation, and the next one completes."""
    from platform_eval import AsyncClient
    from platform_eval.lro import AsyncOperationFuture
    from platform_eval.types import Operation

    running = Operation(name=f"projects/{project}/locations/us-central1/operations/1", done=False)

    async def still_running(self: AsyncClient, *args: Any, **kwargs: Any) -> Any:
        async def refresh(name: str) -> Operation:
            return running

        return AsyncOperationFuture(running, refresh, lambda body: body)

    manifest = tmp_path / "m.jsonl"
    with emulator.client(project, retry=FAST_RETRY) as client:
        with monkeypatch.context() as patched:
            patched.setattr(AsyncClient, "import_set", still_running)
            with jobs.waiting_at_most(0.3), pytest.raises(jobs.UploadIncompleteError) as caught:
                jobs.upload_eval_set(client, _eval_set(ANSWERS), manifest=manifest)
        assert f"the import operation {running.name} did not finish in time" in str(caught.value)
        assert _all_items(client) == []
        evaluation_set = jobs.upload_eval_set(client, _eval_set(ANSWERS), manifest=manifest)
        assert len(evaluation_set.evaluation_items) == len(ANSWERS)
        assert len(_all_items(client)) == len(ANSWERS)
