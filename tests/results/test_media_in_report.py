"""Images, sounds and files in a case's conversation, in the HTML report: small images of the
raster types shown inline and sounds played (data URIs: the page stays self-contained, with no
script), anything else (SVG, a PDF, a large image, a file by URI) named, never fetched."""

from __future__ import annotations

import base64

from platform_eval.results import RunResults
from platform_eval.results.html import MEDIA_BYTES
from platform_eval.results.model import CaseRecord, Row
from platform_eval.types import AgentData, EvaluationRun

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


def _blob(mime: str, data: bytes, name: str | None = None) -> dict[str, object]:
    blob: dict[str, object] = {"mimeType": mime, "data": base64.b64encode(data).decode()}
    if name:
        blob["displayName"] = name
    return {"inlineData": blob}


def _report(parts: list[dict[str, object]]) -> str:
    run = EvaluationRun.model_validate({"name": "projects/p/locations/l/evaluationRuns/1"})
    run.state = "SUCCEEDED"  # type: ignore[assignment]
    turn = {
        "turnIndex": 0,
        "events": [
            {"author": "user", "content": {"role": "user", "parts": [{"text": "Look"}, *parts]}},
            {"author": "agent", "content": {"role": "model", "parts": [{"text": "Seen."}]}},
        ],
    }
    data = AgentData.model_validate({"turns": [turn]})
    rows = [Row("seen", "i", None, "agent", "exact_match", 1.0, 0.5, "e", ())]
    record = CaseRecord("Look", None, {"agent": data})
    return RunResults(run, rows, {"seen": record}).to_html()


def test_a_small_image_is_shown_and_a_sound_played_inline() -> None:
    page = _report([_blob("image/png", PNG, "chart.png"), _blob("audio/wav", b"RIFF....WAVE")])
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in page
    assert 'alt="chart.png, image/png, 67 bytes"' in page
    assert '<audio controls title="audio/wav, 12 bytes" src="data:audio/wav;base64,' in page
    assert "<script" not in page and "http://" not in page.split("<body>", 1)[1]


def test_what_could_carry_script_or_is_large_or_remote_is_named_not_shown() -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    page = _report(
        [
            _blob("image/svg+xml", svg, '"><script>x</script>'),
            _blob("application/pdf", b"%PDF-1.7", "terms.pdf"),
            _blob("image/png", b"\x89PNG" + bytes(MEDIA_BYTES)),
            {"fileData": {"mimeType": "image/png", "fileUri": "https://example.com/a.png"}},
        ]
    )
    assert "data:image/svg" not in page and "<script" not in page
    assert "[&#34;&gt;&lt;script&gt;x&lt;/script&gt;, image/svg+xml, 71 bytes]" in page
    assert "[terms.pdf, application/pdf, 8 bytes]" in page
    assert "image/png, 512 KiB: larger than the report shows" in page
    assert "[image/png: https://example.com/a.png]" in page
    assert page.count("<img") == 0
