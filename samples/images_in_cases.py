"""Images and files in eval cases: a dataset case whose prompt holds a photo, with the answer
the agent gave, scored, its stored request keeping the photo, and the HTML report showing it.

    python samples/images_in_cases.py                        # an embedded emulator, no model
    python samples/images_in_cases.py --project my-project   # the real service
    GOOGLE_API_KEY=... python samples/images_in_cases.py --agent samples/agent/travel_agent

The photo is made here (a small PNG); in a case of yours it is a part beside the text, in an
ADK eval set's `user_content.parts` or a dataset's prompt: `{"inline_data": {"mime_type":
"image/png", "data": "<base64>"}}` (or `file_data` with a URI). With --agent the agent is run on
the case instead (the photo reaches its model), and its answer is scored.
"""

import argparse
import base64
import json
import struct
import zlib
from pathlib import Path

from platform_eval import connect, jobs
from platform_eval.results import fetch_results

parser = argparse.ArgumentParser(description="a case with a photo, scored and reported")
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--agent", help="run this agent on the case (its model needs credentials)")
parser.add_argument("--output", default="images-report.html", help="the HTML report")
args = parser.parse_args()


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A PNG of one colour: what a camera would give, small enough to read here."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


photo = base64.b64encode(png(48, 32, (90, 160, 230))).decode()
case = {
    "eval_case_id": "sky_photo",
    "prompt": {
        "role": "user",
        "parts": [
            {"text": "Here is the sky over Paris right now. What is the weather in Paris?"},
            {"inline_data": {"mime_type": "image/png", "data": photo}},
        ],
    },
    "reference": {
        "response": {"role": "model", "parts": [{"text": "The weather in Paris is sunny."}]}
    },
}
if not args.agent:
    # The answer the agent gave, held in the file: scored as it is.
    case["responses"] = [
        {"response": {"role": "model", "parts": [{"text": "It is sunny in Paris."}]}}
    ]
Path("photo-dataset.json").write_text(json.dumps({"eval_cases": [case]}, indent=1))

with connect(args.project, args.location) as target:
    evaluation = jobs.evaluate(
        target.client,
        "photo-dataset.json",
        metrics=["rouge_1"],
        agent=args.agent,
        poll_interval=target.poll_interval,
        resume=False,
    )
    (name,) = evaluation.evaluation_set.evaluation_items or []
    stored = target.client.get_item(name).to_wire()["evaluationRequest"]
    parts = stored["prompt"]["agentData"]["turns"][0]["events"][0]["content"]["parts"]
    kept = [p["inlineData"]["mimeType"] for p in parts if "inlineData" in p]
    print(f"the stored request keeps the photo: {kept}")
    results = fetch_results(
        target.client, evaluation.run, items=evaluation.results, case_ids=evaluation.upload.case_ids
    )
    print(results.to_table())
    Path(args.output).write_text(results.to_html(), encoding="utf-8")
    shown = "data:image/png;base64," in Path(args.output).read_text(encoding="utf-8")
    print(f"{args.output}: the photo shown inline: {shown}")
