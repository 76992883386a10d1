"""High-level jobs on top of the client: bulk, concurrent, resumable uploads and evaluations.

With a sync ``Client`` each job runs to completion and returns its result; with an
``AsyncClient`` it returns a coroutine to await.
"""

from .manifest import Manifest
from .tasks import EvalSetUpload, Evaluation, evaluate, upload_eval_set, upload_traces
from .upload import Failure, Progress, UploadResult, upload_items_async

__all__ = [
    "EvalSetUpload",
    "Evaluation",
    "Failure",
    "Manifest",
    "Progress",
    "UploadResult",
    "evaluate",
    "upload_eval_set",
    "upload_items_async",
    "upload_traces",
]
