"""An eval set read a case at a time reads exactly what the whole-file loader reads.

Uploads read eval set files so (memory holds the file's text, not every case parsed); the
benchmark ``bench_memory.py`` measures what that saves. Here: the same cases, ids and names as
``load_eval_set`` from every eval set we have, in every spelling JSON allows, and the same
problems, with the file and the JSON path, for the same bad files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from paths import SAMPLE_DATA

from platform_eval import jobs
from platform_eval.formats import FormatError, load_eval_set
from platform_eval.formats.stream import open_eval_set, read_eval_cases

SAMPLES = SAMPLE_DATA

CASE = {
    "eval_id": "brackets",
    "conversation": [
        {
            "invocation_id": "i-1",
            "user_content": {"role": "user", "parts": [{"text": 'a "quoted" ] } [ { text, ü 北'}]},
            "final_response": {"role": "model", "parts": [{"text": "done \\ \n"}]},
            "intermediate_data": {"tool_uses": [{"name": "look", "args": {"q": "]}"}}]},
        }
    ],
}
EVAL_SET = {
    "eval_set_id": "streamed",
    "name": "Streamed",
    "description": "cases read one at a time",
    "eval_cases": [CASE, {**CASE, "eval_id": "second"}],
}


def _same_as_whole(path: Path) -> None:
    streamed = open_eval_set(path)
    whole = load_eval_set(path)
    assert streamed is not None
    assert (streamed.eval_set_id, streamed.name) == (whole.eval_set_id, whole.name)
    assert list(streamed) == whole.eval_cases


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(EVAL_SET),
        json.dumps(EVAL_SET, indent=2, ensure_ascii=False),
        json.dumps(EVAL_SET, separators=(",", ":")),
        "\ufeff" + json.dumps(EVAL_SET, indent="\t"),
        # The cases before the id, and camelCase keys, as some writers have them.
        json.dumps({"evalCases": EVAL_SET["eval_cases"], "evalSetId": "streamed"}),
    ],
    ids=["compact", "indented", "tight", "bom-tabs", "camel-first"],
)
def test_every_json_spelling_reads_as_the_whole_file_loader_reads_it(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "set.evalset.json"
    path.write_text(text, encoding="utf-8")
    _same_as_whole(path)


def test_a_set_with_no_cases_streams_none_and_the_whole_loader_refuses_it(tmp_path: Path) -> None:
    """Nothing to evaluate: refused by the loader that validate and run use, naming the file;
    the reader an upload streams cases with reads none (the upload refuses it too)."""
    path = tmp_path / "set.evalset.json"
    path.write_text(json.dumps({**EVAL_SET, "eval_cases": []}), encoding="utf-8")
    streamed = open_eval_set(path)
    assert streamed is not None and list(streamed) == []
    with pytest.raises(FormatError, match=r"\$\.eval_cases: has no cases"):
        load_eval_set(path)


def test_the_shipped_sample_reads_the_same() -> None:
    _same_as_whole(SAMPLES / "weather.evalset.json")


@pytest.mark.corpus
def test_every_corpus_eval_set_reads_the_same() -> None:
    checked = 0
    for path in sorted(CORPUS.rglob("*.json")):
        try:
            load_eval_set(path)
        except FormatError:
            continue  # not an eval set, or one the whole loader refuses
        streamed = open_eval_set(path)
        if streamed is None:
            continue  # an older shape: the whole-file loader reads it
        _same_as_whole(path)
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("legacy.test.json", [{"query": "hi", "expected_tool_use": [], "reference": "hello"}]),
        ("cases.evalset.yaml", EVAL_SET),
        ("dataset.json", {"eval_cases": [{"prompt": {"text": "x"}}]}),
    ],
)
def test_other_shapes_are_left_to_the_whole_file_loader(
    tmp_path: Path, name: str, content: Any
) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(content))
    assert open_eval_set(path) is None


@pytest.mark.parametrize(
    "text",
    [
        '{"eval_set_id": "x", "eval_cases": [{"eval_id": "a"},',
        '{"eval_set_id": "x", "eval_cases": [{"eval_id": "a"}]} []',
        '{"eval_set_id": 7, "eval_cases": []}',
        '{"eval_set_id": "x", "eval_cases": [{"eval_id": "a", "conversation": []}]}',
        '{"eval_set_id": "x", "eval_cases": [{"eval_id": "a", "conversation": [{}]}]}',
    ],
    ids=["truncated", "extra-data", "id-type", "empty-case", "bad-invocation"],
)
def test_a_broken_file_gets_the_whole_file_loaders_problems(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.evalset.json"
    path.write_text(text)
    with pytest.raises(FormatError) as whole:
        load_eval_set(path)
    with pytest.raises(FormatError) as streamed:
        streamed_file = open_eval_set(path)
        if streamed_file is None:
            load_eval_set(path)  # what an upload does with a file this reader leaves
        else:
            list(streamed_file)
    assert streamed.value.problems == whole.value.problems


def test_a_case_nested_past_the_decoders_depth_is_a_format_error(tmp_path: Path) -> None:
    # The scan that finds each case's span cannot decode it: the whole-file loader says why.
    path = tmp_path / "deep.evalset.json"
    path.write_text('{"eval_set_id": "x", "eval_cases": [' + "[" * 100_000 + "]" * 100_000 + "]}")
    with pytest.raises(FormatError) as whole:
        load_eval_set(path)
    with pytest.raises(FormatError) as streamed:
        read_eval_cases(path)
    assert streamed.value.problems == whole.value.problems
    assert "nested" in str(streamed.value)


def test_bad_cases_are_all_reported_before_anything_is_uploaded(
    tmp_path: Path, sync_client: Any
) -> None:
    bad = {
        **EVAL_SET,
        "eval_cases": [
            CASE,
            {"eval_id": "empty", "conversation": []},
            {**CASE, "eval_id": "typo", "conversaton": []},
        ],
    }
    path = tmp_path / "bad.evalset.json"
    path.write_text(json.dumps(bad, indent=2))
    with pytest.raises(FormatError) as raised:
        jobs.upload_eval_set(sync_client, path, manifest=tmp_path / "m.jsonl")
    with pytest.raises(FormatError) as whole:
        load_eval_set(path)
    assert raised.value.problems == whole.value.problems
    assert raised.value.problems[0].path == "$.eval_cases[1].conversation"
    assert list(sync_client.list_items()) == []


def test_an_upload_from_a_file_matches_one_from_the_parsed_set(
    tmp_path: Path, sync_client: Any
) -> None:
    path = tmp_path / "set.evalset.json"
    path.write_text(json.dumps(EVAL_SET))
    from_file = jobs.upload_eval_set(sync_client, path, manifest=tmp_path / "a.jsonl")
    # The same set, parsed whole: the same items (the same keys), nothing created twice.
    again = jobs.upload_eval_set(sync_client, load_eval_set(path), manifest=tmp_path / "b.jsonl")
    assert again.evaluation_items == from_file.evaluation_items
    assert len(list(sync_client.list_items())) == 2


def test_the_size_limit_of_whole_file_reads_does_not_stop_an_upload(
    tmp_path: Path, sync_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The limit exists because a file parsed whole takes 20-30 times its size; read a case at
    # a time, an upload's memory is the file's text and a few cases.
    path = tmp_path / "set.evalset.json"
    path.write_text(json.dumps(EVAL_SET))
    monkeypatch.setenv("PLATFORM_EVAL_MAX_FILE_MB", "0.0001")
    with pytest.raises(FormatError, match="PLATFORM_EVAL_MAX_FILE_MB"):
        load_eval_set(path)
    uploaded = jobs.upload_eval_set(sync_client, path, manifest=tmp_path / "m.jsonl")
    assert len(uploaded.evaluation_items) == 2
