"""``Client`` and ``AsyncClient``: flat methods over the evaluation resources.

Both clients take the same arguments and have the same methods; the async ones are awaited.
Each method accepts a full resource name or a bare id, and typed objects or plain dicts.
``AsyncClient`` is written once (``_client_async``) and ``Client`` generated from it
(``_client_sync``, by ``tools/unasync_client.py``); only the reading of results differs in
shape between the two (``_result_reading``).
"""

from __future__ import annotations

from ._client_async import AsyncClient
from ._client_base import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    RESULTS_BATCH,
    RESULTS_CONCURRENCY,
    ProgressCallback,
)
from ._client_sync import Client

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "RESULTS_BATCH",
    "RESULTS_CONCURRENCY",
    "AsyncClient",
    "Client",
    "ProgressCallback",
]
