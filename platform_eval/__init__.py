"""platform-eval: agent evaluation on Google's Agent Platform (Vertex AI), online and offline.

The names below are imported on first use (PEP 562): ``import platform_eval`` itself is
cheap, so the ``platform-eval`` command can start its agent's worker processes before it
imports the client, the types and google-genai (``_launcher``). ``from platform_eval import
Client`` and ``platform_eval.types`` work as with eager imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from . import errors, types
    from ._operations import to_metric
    from ._pagination import AsyncPager, Page, Pager
    from ._retry import RetryPolicy
    from .client import AsyncClient, Client
    from .jobs import evaluate
    from .lro import AsyncOperationFuture, OperationFuture
    from .target import Target, connect

#: Where each public name is defined: a submodule of its own, or a name in one.
_WHERE = {
    "errors": ".errors",
    "types": ".types",
    "to_metric": "._operations",
    "AsyncPager": "._pagination",
    "Page": "._pagination",
    "Pager": "._pagination",
    "RetryPolicy": "._retry",
    "AsyncClient": ".client",
    "Client": ".client",
    "evaluate": ".jobs",
    "AsyncOperationFuture": ".lro",
    "OperationFuture": ".lro",
    "Target": ".target",
    "connect": ".target",
}

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
    "evaluate",
    "to_metric",
    "types",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where, __name__)
    value = module if where == f".{name}" else getattr(module, name)
    globals()[name] = value  # the next use is a plain attribute read
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
