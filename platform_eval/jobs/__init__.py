"""High-level jobs on top of the client: bulk, concurrent, resumable uploads and evaluations.

With a sync ``Client`` each job runs to completion and returns its result (the
EvaluationSet for uploads, an ``Evaluation`` for ``evaluate``); with an ``AsyncClient`` it
returns a coroutine to await. Pass ``report=UploadReport()`` to an upload for its detail.
"""

from .manifest import Manifest
from .metric_check import MetricsRefusedError, check_metrics
from .tasks import (
    Evaluation,
    NothingToEvaluateError,
    UploadIncompleteError,
    UploadReport,
    choose_metrics,
    evaluate,
    upload_eval_set,
    upload_traces,
)
from .upload import Failure, Progress, UploadResult, upload_items_async
from .waiting import waiting_at_most

__all__ = [
    "Evaluation",
    "Failure",
    "Manifest",
    "MetricsRefusedError",
    "NothingToEvaluateError",
    "Progress",
    "UploadIncompleteError",
    "UploadReport",
    "UploadResult",
    "check_metrics",
    "choose_metrics",
    "evaluate",
    "upload_eval_set",
    "upload_items_async",
    "upload_traces",
    "waiting_at_most",
]
