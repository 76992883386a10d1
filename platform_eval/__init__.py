"""platform-eval: agent evaluation on Google's Agent Platform (Vertex AI), online and offline."""

from . import errors, types
from ._operations import to_metric
from ._pagination import AsyncPager, Page, Pager
from ._retry import RetryPolicy
from ._version import __version__
from .client import AsyncClient, Client
from .lro import AsyncOperationFuture, OperationFuture
from .target import Target, connect

__all__ = [
    "AsyncClient",
    "AsyncOperationFuture",
    "AsyncPager",
    "Client",
    "OperationFuture",
    "Page",
    "Pager",
    "RetryPolicy",
    "Target",
    "__version__",
    "connect",
    "errors",
    "to_metric",
    "types",
]
