"""The client against a server that misbehaves on purpose (attack probe, issue 27 Medium 8):
a loopback HTTP server whose answers no emulator would give."""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from conftest import AsyncAsSync
from sockets import serve_in_thread

from platform_eval import AsyncClient, Client, _pagination, errors


@contextmanager
def _serving(body: bytes | Callable[[int], bytes], asked: list[str] | None = None) -> Iterator[str]:
    """A loopback server answering every GET with 200 and ``body`` (or ``body(n)`` for the
    n-th request); its URL. The paths asked are kept in ``asked``."""
    count = itertools.count(1)

    def answer(handler: BaseHTTPRequestHandler) -> None:
        if asked is not None:
            asked.append(handler.path)
        body_now = body(next(count)) if callable(body) else body
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(body_now)))
        handler.end_headers()
        handler.wfile.write(body_now)

    with _misbehaving(answer) as url:
        yield url


@pytest.fixture
def repeating_server() -> Iterator[tuple[str, list[str]]]:
    """Every list page says there is a next page, with the same token each time."""
    asked: list[str] = []
    page = json.dumps({"evaluationItems": [], "nextPageToken": "again"}).encode()
    with _serving(page, asked) as url:
        yield url, asked


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_repeated_page_token_is_an_error_not_a_loop(
    repeating_server: tuple[str, list[str]], kind: str
) -> None:
    url, asked = repeating_server
    client: Any = (
        Client("p", api_endpoint=url)
        if kind == "sync"
        else AsyncAsSync(AsyncClient("p", api_endpoint=url))
    )
    try:
        with pytest.raises(errors.RepeatedPageTokenError, match="'again' a second time"):
            list(client.list_items())
    finally:
        client.close()
    assert len(asked) == 2  # the first page, and the one its token named: then it stopped


@contextmanager
def _new_token_every_page(items: list[dict[str, Any]]) -> Iterator[tuple[str, list[str]]]:
    """Every list page has ``items`` and a next page token never given before."""
    asked: list[str] = []

    def page(number: int) -> bytes:
        return json.dumps({"evaluationItems": items, "nextPageToken": f"page-{number}"}).encode()

    with _serving(page, asked) as url:
        yield url, asked


@pytest.mark.parametrize(
    ("items", "said", "pages"),
    [
        ([], "100 empty pages in a row", 100),
        ([{"name": "projects/p/locations/l/evaluationItems/1"}], "the same page again", 2),
    ],
)
def test_page_tokens_that_change_for_ever_are_an_error_not_a_loop(
    items: list[dict[str, Any]], said: str, pages: int
) -> None:
    with (
        _new_token_every_page(items) as (url, asked),
        Client("p", api_endpoint=url) as client,
        pytest.raises(errors.RepeatedPageTokenError, match=said),
    ):
        list(client.list_items())
    assert len(asked) == pages


def _pages(
    page: Callable[[int], list[dict[str, Any]]], delay: float = 0.0
) -> Callable[[int], bytes]:
    def body(number: int) -> bytes:
        time.sleep(delay)
        return json.dumps({"evaluationItems": page(number), "nextPageToken": f"p{number}"}).encode()

    return body


def _named(number: int) -> dict[str, Any]:
    return {"name": f"projects/p/locations/l/evaluationItems/{number}"}


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize(
    ("page", "said", "pages"),
    [
        # One item with no name, the same on every page.
        (lambda n: [{"displayName": "x"}], "the same page again", 2),
        # Two items given in turn: nothing new after the second page.
        (lambda n: [_named(n % 2)], "empty pages in a row (or none new)", 102),
        # A new item on every page, for ever.
        (lambda n: [_named(n)], "still gave a next page after 30 pages", 30),
    ],
)
def test_a_listing_that_would_never_end_stops(
    page: Callable[[int], list[dict[str, Any]]],
    said: str,
    pages: int,
    kind: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_pagination, "MAX_PAGES", 30 if pages == 30 else 1000)
    asked: list[str] = []
    with _serving(_pages(page), asked) as url:
        client: Any = (
            Client("p", api_endpoint=url)
            if kind == "sync"
            else AsyncAsSync(AsyncClient("p", api_endpoint=url))
        )
        try:
            with pytest.raises(errors.RepeatedPageTokenError, match=re.escape(said)):
                list(client.list_items())
        finally:
            client.close()
    assert len(asked) == pages


def test_slow_empty_pages_are_given_up_after_seconds_not_a_hundred_pages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_pagination, "MAX_EMPTY_SECONDS", 0.3)
    asked: list[str] = []
    with (
        _serving(_pages(lambda n: [], delay=0.1), asked) as url,
        Client("p", api_endpoint=url) as client,
        pytest.raises(
            errors.RepeatedPageTokenError, match=r"empty pages \(or none new\) for \d+ s in a row"
        ),
    ):
        list(client.list_items())
    # Stopped by the seconds, long before the count cap of 100 (however slow the machine:
    # slower pages only fill the seconds sooner).
    assert 2 <= len(asked) < _pagination.MAX_EMPTY_PAGES


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_new_item_on_every_page_is_listed_for_seconds_not_for_ever(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh token and one new item a page, each page slow: stopped by the seconds spent
    waiting on pages, long before the count of pages."""
    monkeypatch.setattr(_pagination, "MAX_LISTING_SECONDS", 0.5)
    asked: list[str] = []
    with _serving(_pages(lambda n: [_named(n)], delay=0.05), asked) as url:
        client: Any = (
            Client("p", api_endpoint=url)
            if kind == "sync"
            else AsyncAsSync(AsyncClient("p", api_endpoint=url))
        )
        try:
            with pytest.raises(errors.RepeatedPageTokenError, match=r"s of pages"):
                list(client.list_items())
        finally:
            client.close()
    assert 2 <= len(asked) < 1000


def test_a_run_that_never_ends_is_waited_on_until_the_timeout(
    work: Any, emulator: Any, project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from platform_eval.cli import main

    target = ["--endpoint", emulator.host_port, "--project", project, "-q"]
    command = ["run", "data/weather.evalset.json", "--traces", "data/weather_traces.otlp.json"]
    with emulator.executor.paused():  # the run stays PENDING for as long as the test likes
        code = main([*target, *command, "--metrics", "exact_match", "--timeout", "0.3"])
    assert code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = [line for line in err.splitlines() if "error:" in line]
    assert "0.3" in line and "evaluationRuns/" in line


def test_a_wait_always_has_a_deadline() -> None:
    from platform_eval._waiting import DEFAULT_WAIT_TIMEOUT, Waiter

    assert Waiter(None, 1.0, 10.0)._deadline is not None
    assert DEFAULT_WAIT_TIMEOUT == 24 * 3600
    for bad in (float("inf"), float("nan"), -1.0):
        with pytest.raises(ValueError, match="timeout"):
            Waiter(bad, 1.0, 10.0)


def test_an_upload_whose_target_dies_stops_after_one_items_retries(
    emulator: Any, project: str, tmp_path: Any
) -> None:
    from conftest import FAST_RETRY

    from platform_eval import jobs
    from platform_eval.formats import adk

    cases = [
        {
            "eval_id": f"case-{i}",
            "conversation": [
                {
                    "invocation_id": "t0",
                    "user_content": {"role": "user", "parts": [{"text": f"question {i}"}]},
                    "final_response": {"role": "model", "parts": [{"text": f"answer {i}"}]},
                }
            ],
        }
        for i in range(300)
    ]
    eval_set = adk.EvalSet.model_validate({"eval_set_id": "dies", "eval_cases": cases})
    # Every create's connection is dropped from the start: the target is as good as dead.
    emulator.inject_fault(path="evaluationItems", method="POST", kind="drop", times=100_000)
    with (
        emulator.client(project, retry=FAST_RETRY) as client,
        pytest.raises(errors.TargetUnreachableError, match="Run the same command again"),
    ):
        jobs.upload_eval_set(
            client, eval_set, manifest=tmp_path / "m.jsonl", concurrency=8, bulk_import=False
        )
    (left,) = emulator.pending_faults()
    attempts = 100_000 - left["times"]
    # At most the items under way when the first one ran out of retries: not 300 x 4 tries.
    assert 0 < attempts <= 8 * (FAST_RETRY.max_retries + 1)


def test_a_password_in_the_endpoint_never_appears_in_errors_or_reprs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from conftest import free_port

    from platform_eval.cli import main

    endpoint = f"http://alice:s3cret-pw@127.0.0.1:{free_port()}"
    with Client("p", api_endpoint=endpoint, max_retries=0) as client:
        assert "s3cret-pw" not in repr(client)
        with pytest.raises(errors.APIConnectionError) as failed:
            list(client.list_items())
    assert "s3cret-pw" not in str(failed.value) and "***@127.0.0.1" in str(failed.value)
    assert main(["--endpoint", endpoint, "runs", "list"]) == 2
    captured = capsys.readouterr()
    assert "s3cret-pw" not in captured.err + captured.out


@pytest.mark.parametrize(
    ("body", "what"),
    [(b"<html>proxy error</html>", "not JSON"), (b"[1, 2]", "a JSON list, not an object")],
)
def test_a_body_that_is_not_an_api_answer_is_a_typed_error(body: bytes, what: str) -> None:
    with (
        _serving(body) as url,
        Client("p", api_endpoint=url) as client,
        pytest.raises(errors.InvalidResponseError, match=what),
    ):
        client.get_item("i1")


@contextmanager
def _misbehaving(handler: Any) -> Iterator[str]:
    """A loopback server whose GET is ``handler(request_handler)``; its URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            with contextlib.suppress(OSError):  # the client hung up, as it should
                handler(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    serve_in_thread(server)
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def _trickle_body(handler: BaseHTTPRequestHandler) -> None:
    """Headers at once, then the body a byte every 0.2 s: no single read ever times out."""
    body = json.dumps({"name": "x" * 1000}).encode()
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    for byte in body:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.2)


def _trickle_headers(handler: BaseHTTPRequestHandler) -> None:
    """The status line and headers a byte every 0.2 s."""
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" + b"x-pad: " + b"p" * 200
    for byte in head:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.2)


def _client(kind: str, url: str, **kwargs: Any) -> Any:
    common = {"project": "p", "api_endpoint": url, "max_retries": 0, **kwargs}
    return Client(**common) if kind == "sync" else AsyncAsSync(AsyncClient(**common))


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
@pytest.mark.serial  # bounds wall time: runs alone
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_timeout_is_a_deadline_for_a_body_that_trickles(kind: str) -> None:
    # Before: each byte reset the read timeout, and the call went on for minutes.
    with _misbehaving(_trickle_body) as url:
        client = _client(kind, url, timeout=1.5)
        started = time.monotonic()
        with pytest.raises(errors.APITimeoutError, match=r"1\.5 s timeout"):
            client.get_item("projects/p/locations/us-central1/evaluationItems/1")
        assert time.monotonic() - started < 3.0
        client.close()


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
@pytest.mark.serial  # bounds wall time: runs alone
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_timeout_is_a_deadline_for_headers_that_trickle(kind: str) -> None:
    # Async: the event loop stops an attempt anywhere. Sync: every socket read of our own
    # connections waits at most what is left of the call.
    with _misbehaving(_trickle_headers) as url:
        client = _client(kind, url, timeout=1.5)
        started = time.monotonic()
        with pytest.raises(errors.APITimeoutError):
            client.get_item("projects/p/locations/us-central1/evaluationItems/1")
        assert time.monotonic() - started < 3.0
        client.close()


def _huge_unannounced(handler: BaseHTTPRequestHandler) -> None:
    """An answer with no length, chunk after chunk of 1 MiB, without end."""
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    chunk = b" " * 2**20
    while True:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def _huge_announced(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(2**31))
    handler.end_headers()
    handler.wfile.write(b"{")


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("serve", [_huge_unannounced, _huge_announced])
def test_an_answer_over_the_size_cap_is_refused_not_read(kind: str, serve: Any) -> None:
    with _misbehaving(serve) as url:
        client = _client(kind, url, max_response_bytes=8 * 2**20)
        with pytest.raises(errors.ResponseTooLargeError, match="limit of 8 MiB"):
            client.get_item("projects/p/locations/us-central1/evaluationItems/1")
        client.close()


def test_the_size_cap_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLATFORM_EVAL_MAX_RESPONSE_MB", "0.5")
    big = json.dumps({"name": "x" * 2**20}).encode()
    with (
        _serving(big) as url,
        Client("p", api_endpoint=url, max_retries=0) as client,
        pytest.raises(errors.ResponseTooLargeError, match="PLATFORM_EVAL_MAX_RESPONSE_MB"),
    ):
        client.get_item("projects/p/locations/us-central1/evaluationItems/1")
    monkeypatch.setenv("PLATFORM_EVAL_MAX_RESPONSE_MB", "lots")
    with pytest.raises(errors.ConfigurationError, match="PLATFORM_EVAL_MAX_RESPONSE_MB"):
        Client("p", api_endpoint="http://127.0.0.1:9")


def test_a_gzip_answer_is_read_decoded_and_capped_decoded() -> None:
    import gzip

    def gzipped(handler: BaseHTTPRequestHandler) -> None:
        body = gzip.compress(json.dumps({"name": "n", "displayName": "y" * 3 * 2**20}).encode())
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-encoding", "gzip")
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    with _misbehaving(gzipped) as url:
        with Client("p", api_endpoint=url, max_retries=0) as client:
            item = client.get_item("projects/p/locations/us-central1/evaluationItems/1")
            assert item.display_name == "y" * 3 * 2**20
        # A bomb: a few KiB on the wire, over the cap once decoded.
        with (
            Client("p", api_endpoint=url, max_retries=0, max_response_bytes=2**20) as client,
            pytest.raises(errors.ResponseTooLargeError),
        ):
            client.get_item("projects/p/locations/us-central1/evaluationItems/1")


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_success_body_of_the_wrong_types_names_the_call_and_the_fields(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "projects/p/locations/us-central1/evaluationRuns/1"
    body = {
        "name": name,
        "state": 5,
        "createTime": ["x"],
        "evaluationConfig": {"metrics": "nope"},
        "displayName": {"a": 1},
    }
    with _serving(json.dumps(body).encode()) as url:
        client = _client(kind, url)
        with pytest.raises(errors.InvalidResponseError) as raised:
            client.get_run(name)
        client.close()
        said = str(raised.value)
        assert said.startswith(f"the answer to GET {name} does not fit the API's schema: ")
        assert "state: Input should be" in said and "evaluationConfig.metrics:" in said
        assert "(and 1 more)" in said and "pydantic" not in said and "\n" not in said
        from platform_eval.cli import main

        code = main(["--endpoint", url.removeprefix("http://"), "runs", "get", name])
        err = capsys.readouterr().err
        assert code == 1 and "internal error" not in err and "does not fit" in err
