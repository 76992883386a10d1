"""Bad requests get a 4xx google.rpc error from the emulator, never a 500 or a dropped line.

Each case here once answered 500 (or closed the connection) and some poisoned later requests.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from platform_eval import errors
from platform_eval._json_limits import MAX_DEPTH, limit_problem, too_deep
from platform_eval.emulator import Emulator

SETS = "evaluationSets"
#: A resource any small body makes (a set needs items, an item a payload).
EXPERIMENTS = "evaluationExperiments"
JSON = {"content-type": "application/json"}


@pytest.fixture
def http(emulator: Emulator, project: str) -> Iterator[tuple[httpx.Client, str]]:
    with httpx.Client(timeout=10) as client:
        yield client, f"{emulator.url}/v1beta1/projects/{project}/locations/us-central1"


def _assert_rpc_error(response: httpx.Response, status: int = 400) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == status and error["message"]
    return dict(error)


BAD_BODIES = {
    "lone surrogate": b'{"displayName": "\\ud800x"}',
    "lone surrogate in a key": b'{"labels": {"\\udfff": "x"}, "displayName": "x"}',
    # A low surrogate alone (dc00-dfff): the pre-check once looked for high ones only.
    "lone low surrogate": b'{"displayName": "x\\udc00"}',
    "NaN": b'{"displayName": "x", "metadata": {"n": NaN}}',
    "Infinity": b'{"displayName": "x", "metadata": {"n": -Infinity}}',
    "invalid UTF-8": b'{"displayName": "\xff"}',
    "deep list": b"[" * 100_000 + b"]" * 100_000,
    "deep object": b'{"metadata":' + b'{"a":' * 150 + b"1" + b"}" * 150 + b"}",
    "a list": b"[1, 2]",
    "a string": b'"x"',
    "not JSON": b"{displayName: x}",
}


@pytest.mark.parametrize("body", BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_a_bad_body_is_a_400_and_stores_nothing(
    http: tuple[httpx.Client, str], body: bytes
) -> None:
    client, base = http
    _assert_rpc_error(client.post(f"{base}/{EXPERIMENTS}", content=body, headers=JSON))
    listed = client.get(f"{base}/{EXPERIMENTS}")
    assert listed.status_code == 200 and listed.json() == {EXPERIMENTS: []}


def test_nesting_is_judged_by_depth_not_by_the_number_of_brackets() -> None:
    # A body with more brackets than the depth limit is walked; one with fewer cannot be deep.
    shallow = json.dumps({"metadata": {"rows": [[i] for i in range(300)]}})
    assert limit_problem(json.loads(shallow), shallow) is None
    at_the_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert limit_problem(json.loads(at_the_limit), at_the_limit) is None
    deeper = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    assert limit_problem(json.loads(deeper), deeper) == ("$", too_deep(MAX_DEPTH))


def test_a_surrogate_pair_is_a_valid_string(http: tuple[httpx.Client, str]) -> None:
    client, base = http
    created = client.post(f"{base}/{EXPERIMENTS}", content=b'{"displayName": "\\ud83d\\ude00"}')
    assert created.status_code == 200 and created.json()["displayName"] == "\U0001f600"
    assert client.get(f"{base}/{EXPERIMENTS}").json()[EXPERIMENTS][0]["displayName"] == "\U0001f600"


BAD_QUERIES = {
    "page token of a huge offset": {"pageToken": "9" * 40},
    "page token with a 2^64 offset": {"pageToken": "eyJhZnRlciI6IDE4NDQ2NzQ0MDczNzA5NTUxNjE2fQ"},
    "page size beyond 64 bits": {"pageSize": "9" * 30},
    "negative page size": {"pageSize": "-5"},
    "filter with \\x": {"filter": 'display_name = "\\x"'},
    "filter with a short \\u": {"filter": 'display_name = "\\u12"'},
    "filter with a surrogate \\u": {"filter": 'display_name = "\\ud800"'},
    "filter with 2^64": {"filter": "display_name = 18446744073709551616"},
    "filter with a huge integer": {"filter": "display_name = -99999999999999999999999"},
}


@pytest.mark.parametrize("params", BAD_QUERIES.values(), ids=BAD_QUERIES.keys())
def test_a_bad_list_query_is_a_400(http: tuple[httpx.Client, str], params: dict[str, str]) -> None:
    client, base = http
    _assert_rpc_error(client.get(f"{base}/{EXPERIMENTS}", params=params))


def test_filters_match_non_ascii_and_escaped_values(http: tuple[httpx.Client, str]) -> None:
    client, base = http
    for name in ("café ☕", 'say "hi"\n'):
        assert client.post(f"{base}/{EXPERIMENTS}", json={"displayName": name}).status_code == 200
    for text, expected in (
        ('display_name = "café ☕"', "café ☕"),
        ('display_name = "caf\\u00e9 \\u2615"', "café ☕"),
        ('display_name = "say \\"hi\\"\\n"', 'say "hi"\n'),
    ):
        listed = client.get(f"{base}/{EXPERIMENTS}", params={"filter": text}).json()[EXPERIMENTS]
        assert [s["displayName"] for s in listed] == [expected], text


UPLOAD = "/upload/storage/v1/b/bucket/o"
MULTIPART = {"content-type": "multipart/related; boundary=x"}


def _multipart(metadata: bytes) -> bytes:
    return (
        b"--x\r\nContent-Type: application/json\r\n\r\n"
        + metadata
        + b"\r\n--x\r\nContent-Type: text/plain\r\n\r\ndata\r\n--x--"
    )


@pytest.mark.parametrize(
    "body",
    [b"--x\r\n\r\nzz", _multipart(b"{bad"), _multipart(b"[1]"), _multipart(b'{"name": 5}')],
    ids=["one part", "metadata not JSON", "metadata a list", "name not a string"],
)
def test_a_malformed_multipart_upload_is_a_400(emulator: Emulator, body: bytes) -> None:
    response = httpx.post(
        emulator.url + UPLOAD, params={"uploadType": "multipart"}, content=body, headers=MULTIPART
    )
    _assert_rpc_error(response)


def test_a_good_multipart_upload_still_works(emulator: Emulator) -> None:
    response = httpx.post(
        emulator.url + UPLOAD,
        params={"uploadType": "multipart"},
        content=_multipart(b'{"name": "a/b.txt"}'),
        headers=MULTIPART,
    )
    assert response.status_code == 200 and response.json()["size"] == "4"


def test_bodies_over_the_limit_are_refused(project: str) -> None:
    with Emulator(max_body_bytes=1000) as emu:
        base = f"{emu.url}/v1beta1/projects/{project}/locations/us-central1"
        big = {"displayName": "x" * 2000}
        error = _assert_rpc_error(httpx.post(f"{base}/{EXPERIMENTS}", json=big))
        assert "1000 bytes" in error["message"]

        def chunks() -> Iterator[bytes]:  # no content-length: counted as it streams
            yield b'{"displayName": "'
            yield b"x" * 2000
            yield b'"}'

        _assert_rpc_error(httpx.post(f"{base}/{EXPERIMENTS}", content=chunks()))
        upload = httpx.post(emu.url + UPLOAD, params={"name": "o"}, content=b"x" * 2000)
        _assert_rpc_error(upload)
        assert httpx.post(f"{base}/{EXPERIMENTS}", json={"displayName": "x"}).status_code == 200


BAD_FAULTS = [
    {"status": "abc"},
    {"status": 7},
    {"status": 200},
    {"delay": -1},
    {"delay": 1e9},
    {"times": 0},
    {"times": True},
    {"kind": "explode"},
    {"path": 5},
    {"surprise": 1},
    [1, 2],
    "x",
]


@pytest.mark.parametrize("fault", BAD_FAULTS, ids=[repr(f) for f in BAD_FAULTS])
def test_a_bad_fault_is_refused_and_registers_nothing(emulator: Emulator, fault: Any) -> None:
    response = httpx.post(f"{emulator.url}/_emulator/faults", json=fault)
    _assert_rpc_error(response)
    assert emulator.pending_faults() == []


def test_one_bad_fault_in_a_list_registers_none(emulator: Emulator) -> None:
    faults = {"faults": [{"status": 503}, {"status": "x"}]}
    _assert_rpc_error(httpx.post(f"{emulator.url}/_emulator/faults", json=faults))
    assert emulator.pending_faults() == []


def test_a_client_that_gives_up_on_a_delayed_request_leaves_no_error_in_the_log(
    emulator: Emulator, project: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    base = f"{emulator.url}/v1beta1/projects/{project}/locations/us-central1"
    for method in ("GET", "POST"):
        emulator.inject_fault(path=EXPERIMENTS, method=method, kind="delay", delay=0.5)
        with pytest.raises(httpx.TimeoutException):
            httpx.request(method, f"{base}/{EXPERIMENTS}", json={"displayName": "x"}, timeout=0.1)
    # Wait for the delayed handlers to finish (they answer a client that has gone).
    server = emulator._server
    assert server is not None
    deadline = time.monotonic() + 10
    while server.server_state.tasks:
        assert time.monotonic() < deadline, "the delayed requests never finished"
        time.sleep(0.02)
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert "Traceback" not in caplog.text


def test_errors_carry_aip_193_details(emulator: Emulator, project: str) -> None:
    url = f"{emulator.url}/v1beta1/projects/{project}/locations/us-central1/evaluationItems"
    body = {"evaluationItemType": "REQUEST", "evaluationRequest": {"prompt": {"txt": "x"}}}
    error = httpx.post(url, json=body).json()["error"]
    info, bad_request = error["details"]
    assert info == {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "INVALID_ARGUMENT",
        "domain": "aiplatform.googleapis.com",
    }
    assert bad_request["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    [violation] = bad_request["fieldViolations"]
    assert violation["field"] == "evaluationRequest.prompt"
    assert "unknown field 'txt'" in violation["description"]

    with emulator.client(project) as client:
        with pytest.raises(errors.NotFound) as caught:
            client.get_item("404")
        assert (caught.value.reason, caught.value.domain) == (
            "NOT_FOUND",
            "aiplatform.googleapis.com",
        )


def test_a_body_of_millions_of_tiny_values_is_refused_before_it_is_parsed(
    http: tuple[httpx.Client, str],
) -> None:
    client, base = http
    body = b"[" + b"{}," * 2_000_000 + b"{}]"  # 6 MB, some 2 million objects once parsed
    refused = client.post(f"{base}/{EXPERIMENTS}", content=body, headers=JSON)
    error = _assert_rpc_error(refused)
    assert "holds more than 1000000 values" in error["message"]
    # A large but ordinary body still goes through.
    big_text = {"displayName": "x", "metadata": {"text": "a, b, c " * 100_000}}
    assert client.post(f"{base}/{EXPERIMENTS}", json=big_text).status_code == 200


@pytest.mark.parametrize(
    ("collection", "body", "field"),
    [
        (
            "evaluationItems",
            {"evaluationItemType": "REQUEST", "evaluationRequest": {"prompt": {"text": "q"}}},
            "displayName",
        ),
        (
            "evaluationItems",
            {
                "displayName": "x",
                "evaluationItemType": "REQUEST",
                "evaluationRequest": {
                    "prompt": {"text": "q"},
                    "candidateResponses": [{"text": "a"}],
                },
            },
            "evaluationRequest.candidateResponses[0].candidate",
        ),
        ("evaluationSets", {"displayName": "x"}, "evaluationItems"),
        ("evaluationExperiments", {}, "displayName"),
        (
            "evaluationMetrics",
            {"metric": {"llmBasedMetricSpec": {"metricPromptTemplate": "x"}}},
            "displayName",
        ),
    ],
)
def test_a_field_the_documents_require_is_required(
    emulator: Emulator, project: str, collection: str, body: dict[str, Any], field: str
) -> None:
    url = f"{emulator.url}/v1beta1/projects/{project}/locations/us-central1/{collection}"
    answer = httpx.post(url, json=body)
    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == f"{field} is required"


def test_a_run_without_a_display_name_is_refused_and_our_client_gives_one(
    emulator: Emulator, project: str
) -> None:
    with emulator.client(project) as client:
        item = client.create_item(
            {
                "displayName": "x",
                "evaluationItemType": "REQUEST",
                "evaluationRequest": {
                    "prompt": {"text": "q"},
                    "candidateResponses": [{"candidate": "a", "text": "q"}],
                },
            }
        )
        evaluation_set = client.create_set(display_name="s", items=[item])
        body = {
            "dataSource": {"evaluationSet": evaluation_set.name},
            "evaluationConfig": {"metrics": [{"metric": "exact_match"}]},
        }
        answer = httpx.post(f"{emulator.url}/v1beta1/{client.parent}/evaluationRuns", json=body)
        assert (
            answer.status_code == 400
            and answer.json()["error"]["message"] == "displayName is required"
        )
        run = client.create_run(body)
        assert (run.display_name or "").startswith("platform-eval ")


def test_a_run_of_a_metric_only_the_service_computes_is_501_naming_why(
    emulator: Emulator, project: str
) -> None:
    """safety_v1 is a right name the emulator cannot compute: UNIMPLEMENTED, as for COMET and
    MetricX, not a bad request."""
    from factories import request_item
    from google.api_core import exceptions as core

    with emulator.client(project) as client:
        item = client.create_item(request_item("x", golden={"text": "x"},
                                               candidates=[{"candidate": "a", "text": "x"}]))  # fmt: skip
        evaluation_set = client.create_set(display_name="s", items=[item])
        with pytest.raises(core.MethodNotImplemented) as refused:
            client.create_run(evaluation_set=evaluation_set, metrics=["safety_v1"])
    assert "safety_v1" in str(refused.value) and "on the service" in str(refused.value)
