"""Run by test_jobs in a subprocess that the test kills mid-upload."""

import sys

from platform_eval import Client, jobs
from platform_eval.formats import adk

count, manifest, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
eval_set = adk.EvalSet.model_validate(
    {
        "eval_set_id": "generated",
        "eval_cases": [
            {
                "eval_id": f"case-{i}",
                "conversation": [{"user_content": {"parts": [{"text": f"question {i}"}]}}],
            }
            for i in range(count)
        ],
    }
)
with Client() as client:
    jobs.upload_eval_set(
        client, eval_set, manifest=manifest, concurrency=4, bulk_import=mode == "import"
    )
