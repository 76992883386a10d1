"""A number JSON cannot hold never enters the store (attack probe, High 1).

``{"metadata": {"x": 1e999}}`` used to be stored as a bare ``Infinity`` and an import line's
``NaN`` as it was; SQLite then refused every query that read the body ("malformed JSON"), so
every filtered or ordered list of the project answered 500 and every new run FAILED, for good.
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from factories import request_item

from platform_eval.emulator import Emulator
from platform_eval.emulator.store import encode

SETS = "evaluationSets"
#: A resource any small body makes (a set needs items, an item a payload).
EXPERIMENTS = "evaluationExperiments"


@pytest.fixture
def base(emulator: Emulator, project: str) -> str:
    return f"{emulator.url}/v1beta1/projects/{project}/locations/us-central1"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def _lists_still_work(http: httpx.Client, base: str) -> None:
    for params in ({"filter": 'display_name = "kept"'}, {"orderBy": "display_name desc"}):
        listed = http.get(f"{base}/{EXPERIMENTS}", params=params)
        assert listed.status_code == 200, listed.text
        assert [s["displayName"] for s in listed.json()[EXPERIMENTS]] == ["kept"]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ('{"displayName": "x", "metadata": {"x": 1e999}}', "$.metadata.x"),
        ('{"displayName": "x", "metadata": {"rows": [1.5, -2e400]}}', "$.metadata.rows[1]"),
    ],
)
def test_an_overflowing_number_is_a_400_naming_its_path(
    http: httpx.Client, base: str, body: str, path: str
) -> None:
    assert http.post(f"{base}/{EXPERIMENTS}", json={"displayName": "kept"}).status_code == 200
    refused = http.post(f"{base}/{EXPERIMENTS}", content=body.encode())
    assert refused.status_code == 400, refused.text
    message = refused.json()["error"]["message"]
    assert f"at {path}:" in message and "beyond a double's range" in message
    assert message.count("JSON has no") == 1  # said once
    _lists_still_work(http, base)


def test_a_nan_is_named_once_for_what_it_is(http: httpx.Client, base: str) -> None:
    body = b'{"displayName": "x", "metadata": {"score": NaN}}'
    message = http.post(f"{base}/{EXPERIMENTS}", content=body).json()["error"]["message"]
    assert message == (
        "the request body at $.metadata.score: NaN is not a JSON value (JSON has no NaN or "
        "infinity)"
    )


def test_an_overflowing_number_in_a_patch_is_refused(http: httpx.Client, base: str) -> None:
    created = http.post(f"{base}/{EXPERIMENTS}", json={"displayName": "kept"}).json()
    patch = http.patch(
        f"{base}/{EXPERIMENTS}/{created['name'].rsplit('/', 1)[1]}",
        params={"updateMask": "metadata"},
        content=b'{"metadata": {"x": 1e999}}',
    )
    assert patch.status_code == 400 and "$.metadata.x" in patch.json()["error"]["message"]
    _lists_still_work(http, base)


@pytest.mark.parametrize("number", ["NaN", "1e999"])
def test_a_non_finite_number_in_an_import_line_fails_the_import(
    http: httpx.Client, base: str, project: str, number: str
) -> None:
    assert http.post(f"{base}/{EXPERIMENTS}", json={"displayName": "kept"}).status_code == 200
    line = json.dumps(request_item("case", prompt="q")).replace(
        '"displayName"', f'"metadata": {{"n": {number}}}, "displayName"', 1
    )
    body = {
        "evaluationSet": {"displayName": "imported"},
        "gcsDestination": {"outputUriPrefix": f"gs://{project}-imports/p/"},
        "inlineSource": {
            "content": base64.b64encode(line.encode()).decode(),
            "importSchemaConfig": {"dataFormat": "JSONL"},
        },
    }
    operation = http.post(f"{base}/{SETS}:import", json=body).json()
    assert operation["done"] is True
    assert "line 1" in operation["error"]["message"]
    assert "$.metadata.n" in operation["error"]["message"]
    _lists_still_work(http, base)


def test_a_computed_non_finite_number_is_stored_as_proto3_json_writes_it() -> None:
    text = encode({"score": math.nan, "limits": [math.inf, -math.inf]})
    assert json.loads(text) == {"score": "NaN", "limits": ["Infinity", "-Infinity"]}
    assert sqlite3.connect(":memory:").execute("SELECT json_valid(?)", (text,)).fetchone() == (1,)


def test_a_database_poisoned_by_an_earlier_version_is_repaired_when_opened(
    tmp_path: Path,
) -> None:
    db = tmp_path / "old.sqlite"
    project = "poisoned"
    base = f"/v1beta1/projects/{project}/locations/us-central1"
    with Emulator(db=str(db)) as emulator, httpx.Client(timeout=10, base_url=emulator.url) as http:
        assert http.post(f"{base}/{EXPERIMENTS}", json={"displayName": "kept"}).status_code == 200
    # What an earlier version wrote: bare constants, and no schema version.
    with sqlite3.connect(db) as raw:
        raw.execute(
            "UPDATE resources SET body=replace(body, '\"displayName\"', "
            '\'"metadata":{"x":Infinity,"y":NaN},"displayName"\')'
        )
        raw.execute("PRAGMA user_version=0")
    with sqlite3.connect(db) as raw, pytest.raises(sqlite3.OperationalError, match="malformed"):
        raw.execute("SELECT json_extract(body, '$.displayName') FROM resources").fetchall()
    with Emulator(db=str(db)) as emulator, httpx.Client(timeout=10, base_url=emulator.url) as http:
        _lists_still_work(http, base)
        stored = http.get(f"{base}/{EXPERIMENTS}").json()
    assert stored[EXPERIMENTS][0]["metadata"] == {"x": "Infinity", "y": "NaN"}
