"""Migrate ADK eval sets to EvaluationDataset files and back, then upload the result.

    python samples/migrate_evalsets.py                                  # the sample eval set
    python samples/migrate_evalsets.py --from tests/eval/evalsets --out tests/eval/datasets
    python samples/migrate_evalsets.py --project my-project             # upload to the service

Writes ``<name>-dataset.json`` for every ``*.evalset.json`` and ``*.test.json`` in --from,
with a report of anything the other format cannot hold, reads each dataset back into an ADK
eval set (the reverse migration), and uploads that to show it is the same evaluation.
"""

import argparse
import tempfile
from pathlib import Path

from platform_eval import connect, formats, jobs

DATA = Path(__file__).resolve().parent / "data"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--from", dest="source", default=str(DATA), help="folder of ADK eval sets")
parser.add_argument("--out", default=tempfile.mkdtemp(), help="folder for the dataset files")
parser.add_argument("--project", help="Google Cloud project (default: an embedded emulator)")
parser.add_argument("--location", default="us-central1")
args = parser.parse_args()

reports = formats.migrate_directory(args.source, args.out, overwrite=True)
for report in reports:
    print(report.summary())

with connect(args.project, args.location) as target:
    for report in reports:
        dataset = formats.load_dataset(report.destination)
        set_id = Path(report.destination).name.removesuffix("-dataset.json")
        eval_set, _ = formats.dataset_to_eval_set(dataset, set_id)
        evaluation_set = jobs.upload_eval_set(target.client, eval_set)
        print(
            f"{report.destination} -> {len(eval_set.eval_cases)} eval cases -> "
            f"{evaluation_set.name}"
        )
