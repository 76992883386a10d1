"""Cloud Storage multipart uploads are read in one pass (attack probe, High 3).

A 3.6 MB body of 100,000 tiny parts used to hold every request of the emulator for 53 s (the
email parser's time grows with the square of the parts); it is refused at the third part now.
"""

from __future__ import annotations

import base64
import re

import httpx
import pytest

from platform_eval.emulator import Emulator, multipart
from platform_eval.emulator.backend import ApiError

UPLOAD = "/upload/storage/v1/b/bucket/o"


def _upload(emulator: Emulator, body: bytes, content_type: str) -> httpx.Response:
    return httpx.post(
        emulator.url + UPLOAD,
        params={"uploadType": "multipart"},
        content=body,
        headers={"content-type": content_type},
        timeout=30,
    )


def test_a_hundred_thousand_tiny_parts_are_refused_at_the_third(emulator: Emulator) -> None:
    body = b"".join(b"--x\r\n\r\ny\r\n" for _ in range(100_000)) + b"--x--"
    assert len(body) > 1_000_000
    refused = _upload(emulator, body, "multipart/related; boundary=x")
    assert refused.status_code == 400
    assert "a metadata part and a media part, not more" in refused.json()["error"]["message"]
    # The emulator still answers everything else.
    assert httpx.get(f"{emulator.url}/_emulator/health", timeout=10).status_code == 200


def test_a_large_media_part_full_of_near_boundaries_is_read_whole(emulator: Emulator) -> None:
    # Lines that start like the boundary but are not it: each is looked at once.
    media = b"\n--xy not the boundary\n-- x\n" * 200_000
    body = (
        b'--x\r\nContent-Type: application/json\r\n\r\n{"name": "big.txt"}\r\n'
        b"--x\r\nContent-Type: text/plain\r\n\r\n" + media + b"\r\n--x--\r\n"
    )
    stored = _upload(emulator, body, "multipart/related; boundary=x")
    assert stored.status_code == 200, stored.text
    assert stored.json()["size"] == str(len(media))
    read = httpx.get(f"{emulator.url}/storage/v1/b/bucket/o/big.txt", params={"alt": "media"})
    assert read.content == media


def test_what_clients_send_is_read() -> None:
    # google-resumable-media: a quoted boundary, charset parameters, CRLF.
    body = (
        b'--==0==\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n{"name": "a"}\r\n'
        b"--==0==\r\ncontent-type: Text/Plain; charset=utf-8\r\n\r\nhello --==0== there\r\n"
        b"--==0==--"
    )
    metadata, media = multipart.parse(body, 'multipart/related; boundary="==0=="')
    assert (metadata.content_type, metadata.data) == ("application/json", b'{"name": "a"}')
    assert (media.content_type, media.data) == ("text/plain", b"hello --==0== there")


def test_a_preamble_bare_line_feeds_and_base64_are_read() -> None:
    body = (
        b"preamble\n--b\n\n{}\n--b \nContent-Transfer-Encoding: base64\n\n"
        + base64.b64encode(b"\x00\x01binary")
        + b"\n--b--\nepilogue"
    )
    metadata, media = multipart.parse(body, "multipart/related; boundary=b")
    assert (metadata.content_type, metadata.data) == (None, b"{}")
    assert media.data == b"\x00\x01binary"


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (b"--x\r\n\r\na\r\n--x--", "multipart/related; boundary=x", "got 1 part(s)"),
        (b"--x\r\n\r\na\r\n--x\r\n\r\nb", "multipart/related; boundary=x", "no closing boundary"),
        (b"no boundary here", "multipart/related; boundary=x", "no boundary line"),
        (b"--x\r\n\r\na\r\n--x\r\n\r\nb\r\n--x--", "text/plain", "not multipart"),
        (b"--x\r\n\r\na\r\n--x\r\n\r\nb\r\n--x--", "multipart/related", "names no boundary"),
        (
            b"--x\r\nbad header\r\n\r\na\r\n--x\r\n\r\nb\r\n--x--",
            "multipart/mixed; boundary=x",
            "has no colon",
        ),
        (
            b"--x\r\nContent-Transfer-Encoding: gzip\r\n\r\na\r\n--x\r\n\r\nb\r\n--x--",
            "multipart/related; boundary=x",
            "'gzip' is not supported",
        ),
        (
            b"--x\r\n" + b"H: v\r\n" * 2000 + b"\r\na\r\n--x\r\n\r\nb\r\n--x--",
            "multipart/related; boundary=x",
            "headers are over",
        ),
    ],
)
def test_malformed_bodies_are_refused_saying_why(
    body: bytes, content_type: str, message: str
) -> None:
    with pytest.raises(ApiError, match=re.escape(message)) as refused:
        multipart.parse(body, content_type)
    assert refused.value.status == "INVALID_ARGUMENT"
