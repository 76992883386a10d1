"""High-level jobs on top of the client: bulk, concurrent, resumable uploads and evaluations.

With a sync ``Client`` each job runs to completion and returns its result (the
EvaluationSet for uploads, an ``Evaluation`` for ``evaluate``); with an ``AsyncClient`` it
returns a coroutine to await. Pass ``report=UploadReport()`` to an upload for its detail.
"""

from .manifest import Manifest
from .metric_check import MetricsRefusedError, check_metrics
from .plan import (
    EvaluationPlan,
    MetricPlan,
    ThresholdError,
    build_plan,
    choose_metrics,
    merge_thresholds,
    plan_metrics,
)
from .plan_error import PlanError
from .tasks import (
    Evaluation,
    NothingToEvaluateError,
    UploadIncompleteError,
    UploadReport,
    evaluate,
    execute,
    upload_eval_set,
    upload_traces,
)
from .upload import Failure, Progress, UploadResult, upload_items_async
from .waiting import waiting_at_most

__all__ = [
    "Evaluation",
    "EvaluationPlan",
    "Failure",
    "Manifest",
    "MetricPlan",
    "MetricsRefusedError",
    "NothingToEvaluateError",
    "PlanError",
    "Progress",
    "ThresholdError",
    "UploadIncompleteError",
    "UploadReport",
    "UploadResult",
    "build_plan",
    "check_metrics",
    "choose_metrics",
    "evaluate",
    "execute",
    "merge_thresholds",
    "plan_metrics",
    "upload_eval_set",
    "upload_items_async",
    "upload_traces",
    "waiting_at_most",
]
