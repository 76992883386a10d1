"""How an upload cuts its items into ``evaluationSets:import`` calls: a small first chunk (the
target starts on it while the rest is built), then chunks under the inline limit; every item
exactly once and in order, a line larger than a chunk alone, an item that cannot be built
reported and left out."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from platform_eval import Client, jobs
from platform_eval.emulator.server import Emulator
from platform_eval.formats import adk, stream
from platform_eval.formats.convert import ConversionReport
from platform_eval.jobs import upload
from platform_eval.jobs.tasks import _pending_cases
from platform_eval.jobs.upload import Failure, PendingItem
from platform_eval.types import EvaluationItem


def _item(key: str, size: int) -> Callable[[], EvaluationItem]:
    def build() -> EvaluationItem:
        return EvaluationItem.model_validate(
            {
                "displayName": key,
                "evaluationItemType": "REQUEST",
                "evaluationRequest": {"prompt": {"text": "x" * size}},
            }
        )

    return build


def _broken() -> EvaluationItem:
    raise ValueError("cannot be built")


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upload, "FIRST_IMPORT_CHUNK_BYTES", 1_000)
    monkeypatch.setattr(upload, "IMPORT_CHUNK_BYTES", 3_000)


@pytest.mark.usefixtures("small_chunks")
def test_the_first_chunk_is_small_and_no_chunk_passes_its_limit() -> None:
    todo: list[PendingItem] = [(f"k{i}", _item(f"k{i}", 100)) for i in range(60)]
    chunks = list(upload._import_chunks(todo, "set", lambda done, failure: None))
    sizes = [len(data) for _, data, _ in chunks]
    assert sizes[0] <= 1_000 and all(size <= 3_000 for size in sizes[1:])
    assert len(chunks) > 2 and sizes[1] > sizes[0]
    sent = [key for entries, _, _ in chunks for key, _ in entries]
    assert sent == [key for key, _ in todo]
    assert not any(whole for _, _, whole in chunks)
    for entries, data, _ in chunks:
        lines = data.split(b"\n")
        assert [json.loads(line)["displayName"] for line in lines] == [k for k, _ in entries]


@pytest.mark.usefixtures("small_chunks")
def test_a_line_larger_than_a_chunk_goes_alone_and_a_broken_item_is_reported() -> None:
    failures: list[Failure] = []
    todo: list[PendingItem] = [
        ("small", _item("small", 10)),
        ("huge", _item("huge", 5_000)),
        ("broken", _broken),
        ("after", _item("after", 10)),
    ]
    chunks = list(
        upload._import_chunks(todo, "set", lambda done, f: failures.append(f) if f else None)
    )
    keys = [[key for key, _ in entries] for entries, _, _ in chunks]
    assert keys == [["small"], ["huge"], ["after"]]
    assert not any(whole for _, _, whole in chunks)
    assert [f.key for f in failures] == ["broken"] and "cannot be built" in failures[0].reason


@pytest.mark.usefixtures("small_chunks")
def test_a_set_that_fits_one_import_is_one_chunk_marked_whole() -> None:
    """The first chunk grows to the inline limit when the first lines say the whole set fits:
    one import, whose set can be the upload's own (nothing made on the way to delete)."""
    todo: list[PendingItem] = [(f"k{i}", _item(f"k{i}", 10)) for i in range(12)]
    chunks = list(upload._import_chunks(todo, "set", lambda done, failure: None))
    assert len(chunks) == 1 and chunks[0][2]
    assert [key for key, _ in chunks[0][0]] == [key for key, _ in todo]
    assert len(chunks[0][1]) > 1_000  # past the small first chunk's size


@pytest.mark.usefixtures("small_chunks")
def test_a_chunk_with_an_item_left_out_is_not_the_whole_set() -> None:
    todo: list[PendingItem] = [("a", _item("a", 10)), ("broken", _broken), ("b", _item("b", 10))]
    chunks = list(upload._import_chunks(todo, "set", lambda done, failure: None))
    assert [[key for key, _ in entries] for entries, _, _ in chunks] == [["a", "b"]]
    assert not chunks[0][2]


def test_a_large_eval_set_file_is_read_again_case_by_case_and_uploaded_whole(
    sync_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above ``KEEP_PARSED_BYTES`` an upload keeps no parsed case (each is read again when its
    item is built: memory stays near the file's size), and every case still lands once, as it
    is in the file."""
    monkeypatch.setattr(stream, "KEEP_PARSED_BYTES", 0)
    path = tmp_path / "large.evalset.json"
    cases = [
        {"eval_id": f"case-{i}", "conversation": [{"user_content": {"parts": [{"text": f"q{i}"}]}}]}
        for i in range(12)
    ]
    path.write_text(json.dumps({"eval_set_id": "large", "eval_cases": cases}))
    read = stream.read_eval_cases(path)
    assert not read.keeps_parsed_cases
    pending = _pending_cases(read, ConversionReport(), None)
    assert all(not isinstance(build.args[0], adk.EvalCase) for _, build in pending)  # type: ignore[attr-defined]
    uploaded = jobs.upload_eval_set(sync_client, path, manifest=tmp_path / "m.jsonl")
    names = uploaded.evaluation_items or []
    assert len(names) == 12
    prompts = sorted(
        sync_client.get_item(name).evaluation_request.prompt.text  # type: ignore[union-attr]
        for name in names
    )
    assert prompts == sorted(f"q{i}" for i in range(12))


def test_items_read_while_the_target_is_asked_stop_the_upload_when_they_cannot_be_read(
    emulator: Emulator, project: str, tmp_path: Path
) -> None:
    """``pending`` as a callable runs while the lookups are on their way: its error is the
    upload's, the lookups are cancelled (no task left behind), nothing is created."""
    import asyncio

    from platform_eval.jobs import Manifest, upload_items_async

    def unreadable() -> list[PendingItem]:
        raise ValueError("the file changed under us")

    async def main() -> None:
        async with emulator.async_client(project) as client:
            manifest = Manifest(tmp_path / "m.jsonl", parent=client.parent, source="t")
            with pytest.raises(ValueError, match="changed under us"):
                await upload_items_async(
                    client, unreadable, manifest=manifest, set_id="s", display_name="s"
                )
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            assert others == []
            read = await upload_items_async(
                client,
                lambda: [("a", _item("a", 10))],
                manifest=manifest,
                set_id="s",
                display_name="s",
            )
            assert read.ok and len(read.items) == 1

    asyncio.run(main())
    with emulator.client(project) as client:
        assert len(list(client.list_items())) == 1 and len(list(client.list_sets())) == 1
