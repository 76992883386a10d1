"""Upload an ADK eval set as an evaluation set; run it again and nothing is uploaded twice.

    python samples/upload_eval_set.py                         # an embedded emulator
    python samples/upload_eval_set.py --project my-project    # the real service
    python samples/upload_eval_set.py --evalset tests/eval/evalsets/basic.evalset.json

Each eval case becomes a REQUEST item (the user turns, the golden answers, the expected tool
calls and the rubrics), and the set holds exactly the file's cases in the file's order. An
upload cut short resumes where it stopped; an edited case replaces its item in the set.
"""

import argparse
from pathlib import Path

from platform_eval import connect, jobs

DATA = Path(__file__).resolve().parent / "data"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
parser.add_argument("--evalset", default=str(DATA / "weather.evalset.json"))
args = parser.parse_args()

with connect(args.project, args.location) as target:
    client = target.client
    for attempt in ("first upload", "second upload"):
        report = jobs.UploadReport()
        evaluation_set = jobs.upload_eval_set(client, args.evalset, report=report)
        print(f"{attempt}: {evaluation_set.name}: {report.headline()}")
    for name in evaluation_set.evaluation_items or []:
        item = client.get_item(name)
        print(f"  {item.name}: eval case {(item.labels or {}).get('eval-case-id')}")
