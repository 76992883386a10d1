"""What both clients share: configuration, and everything that does no I/O (``_ClientBase``),
with the helpers their methods use. ``AsyncClient`` (``_client_async``) is written by hand;
``Client`` (``_client_sync``) is generated from it."""

from __future__ import annotations

import math
from collections.abc import (
    AsyncIterator,
    Callable,
    Iterator,
    Sequence,
)
from dataclasses import dataclass
from itertools import islice
from typing import Any, TypeVar

from google.auth import credentials as ga_credentials

from ._auth import Authenticator
from ._config import Settings, resolve_settings, shown_url
from ._env import mebibytes
from ._gc import collector_paused
from ._names import RUNS, ResourceRef
from ._operations import (
    ITEMS_PAGE_SIZE,
    RESULTS_PAGE_SIZE,
    MetricLike,
    Op,
    Operations,
    to_metric,
)
from ._pagination import Page
from ._retry import RetryPolicy
from ._transport import (
    DEFAULT_MAX_RESPONSE_BYTES,
    MAX_RESPONSE_MB_ENV,
    ApiCall,
    TransportConfig,
)
from ._waiting import Waiter
from .errors import (
    ConfigurationError,
    WaitTimeoutError,
)
from .types import (
    EvaluationItem,
    EvaluationRun,
    EvaluationSet,
    EvaluationSetRevision,
    WireModel,
)

T = TypeVar("T")
P = TypeVar("P")
M = TypeVar("M", bound=WireModel)

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3
#: How many result items ``AsyncClient.get_results`` fetches at once.
RESULTS_CONCURRENCY = 16
#: Result items built at a time from a page's text: what memory holds beyond the pages' text.
RESULTS_BATCH = 25


@dataclass(frozen=True)
class _Reading:
    """How a pull reads results: pages of ``page_size``, items built ``batch`` at a time."""

    page_size: int
    batch: int


#: ``iter_results``: small pages and batches, so memory holds about two pages of JSON.
_STREAMED = _Reading(RESULTS_PAGE_SIZE, RESULTS_BATCH)
#: ``get_results`` keeps every item anyway: whole pages of 1,000 built at once, the collector
#: held for each (built 25 at a time, the collector walked the growing heap between batches:
#: 3x the time at 20,000 items).
_KEPT = _Reading(ITEMS_PAGE_SIZE, ITEMS_PAGE_SIZE)

ProgressCallback = Callable[[EvaluationRun], None]


def _response_cap(max_response_bytes: int | None) -> int:
    """The cap on one answer: as given, else ``PLATFORM_EVAL_MAX_RESPONSE_MB``, else 256 MiB."""
    if max_response_bytes is None:
        return mebibytes(MAX_RESPONSE_MB_ENV, DEFAULT_MAX_RESPONSE_BYTES / 2**20)
    if isinstance(max_response_bytes, bool) or max_response_bytes <= 0:
        raise ValueError(
            f"max_response_bytes must be a positive number, got {max_response_bytes!r}"
        )
    return max_response_bytes


class _ClientBase:
    """Configuration and everything that does no I/O, shared by both clients."""

    #: What the target is, beyond its address: an emulator's database file (its port changes
    #: from one start to the next; its data does not). Set by ``Emulator.client``.
    _identity: str | None = None

    def __init__(
        self,
        project: str | None = None,
        location: str | None = None,
        *,
        credentials: ga_credentials.Credentials | None = None,
        api_endpoint: str | None = None,
        api_version: str = "v1beta1",
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry: RetryPolicy | None = None,
        max_response_bytes: int | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if not 0 < timeout < math.inf:  # NaN fails this too
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self._settings: Settings = resolve_settings(
            project=project,
            location=location,
            credentials=credentials,
            api_endpoint=api_endpoint,
            api_version=api_version,
        )
        policy = retry or RetryPolicy(max_retries=max_retries)
        self._transport_config = TransportConfig(
            base_url=self._settings.base_url,
            api_version=api_version,
            authenticator=Authenticator(self._settings.credentials),
            timeout=timeout,
            retry=policy,
            dedupes_creates=self._settings.emulator,
            trusted_plain_hosts=self._settings.trusted_plain_hosts,
            anonymous_prefix=self._settings.storage_url
            if self._settings.storage_emulator
            else None,
            max_response_bytes=_response_cap(max_response_bytes),
        )
        self._ops = Operations(self._settings.parent, self._settings.storage_url)

    @property
    def project(self) -> str:
        return self._settings.project

    @property
    def location(self) -> str:
        return self._settings.location

    @property
    def parent(self) -> str:
        """``projects/{project}/locations/{location}``."""
        return self._settings.parent

    @property
    def api_endpoint(self) -> str:
        return self._settings.base_url

    @property
    def is_emulator(self) -> bool:
        return self._settings.emulator

    @property
    def target_identity(self) -> str:
        """What names this client's target across processes: an emulator's database file, or
        the endpoint; with the project and location. Local journals (upload manifests, started
        runs) are kept per target identity."""
        return f"{self._identity or self.api_endpoint}|{self.parent}"

    def _page_op(
        self,
        collection: str,
        model: type[M],
        filter: str | None,
        page_size: int | None,
        order_by: str | None,
    ) -> Callable[[str | None], Op[Page[M]]]:
        """The request for each page of a ``list_*`` call, given the page's token."""
        return lambda token: self._ops.list_page(
            collection,
            model,
            filter=filter,
            page_size=page_size,
            page_token=token,
            order_by=order_by,
        )

    def _emulator_get(self, path: str, resource: str) -> ApiCall:
        """A GET of what only the emulator serves, under ``/_emulator/`` beside the API."""
        url = f"{self.api_endpoint.rstrip('/')}/_emulator/{path}"
        return ApiCall("GET", f"_emulator/{path}", url=url, resource=resource)

    def _metric_refusals(
        self, metrics: Sequence[MetricLike], rubric_types: Sequence[str | None] | None
    ) -> Op[list[dict[str, str]]] | None:
        if not self.is_emulator:
            return None  # the service answers for its metrics when a run is created
        body: dict[str, Any] = {"metrics": [to_metric(m).to_wire() for m in metrics]}
        if rubric_types is not None:
            body["rubricTypes"] = list(rubric_types)
        url = f"{self.api_endpoint.rstrip('/')}/_emulator/computable"
        call = ApiCall("POST", "_emulator/computable", url=url, body=body, resource="metrics")

        def parse(answer: Any) -> list[dict[str, str]]:
            refused = answer.get("refused") if isinstance(answer, dict) else None
            return [dict(r) for r in refused or [] if isinstance(r, dict)]

        return Op(call, parse)

    def _run_judge_usage(self, run: ResourceRef) -> Op[dict[str, Any] | None] | None:
        if not self.is_emulator:
            return None  # the service reports no judge cost
        name = self._ops.name(RUNS, run)
        call = self._emulator_get(f"judge-usage/{name}", name)
        return Op(call, lambda body: body if isinstance(body, dict) else None)

    def _recorded_telemetry(self) -> Op[list[dict[str, Any]]]:
        if not self.is_emulator:
            raise ConfigurationError(
                "recorded telemetry comes from the emulator's OTLP receiver; this client points "
                f"at {shown_url(self.api_endpoint)}, not at an emulator"
            )
        call = self._emulator_get("otlp", "recorded telemetry")
        return Op(call, lambda body: body if isinstance(body, list) else [])

    def _run_progress(self, run: ResourceRef) -> Op[tuple[int, int] | None] | None:
        if not self.is_emulator:
            return None  # the service reports no progress
        name = self._ops.name(RUNS, run)
        call = self._emulator_get(f"progress/{name}", name)

        def parse(body: Any) -> tuple[int, int] | None:
            if not isinstance(body, dict) or "completedItems" not in body:
                return None
            return int(body["completedItems"]), int(body.get("totalItems", 0))

        return Op(call, parse)

    def _options(self) -> dict[str, Any]:
        """The constructor's arguments that rebuild this client's configuration as resolved
        (the project and credentials found, the endpoint, the timeout and retry policy)."""
        config = self._transport_config
        return {
            "project": self.project,
            "location": self.location,
            "credentials": self._settings.credentials,
            "api_endpoint": self.api_endpoint,
            "api_version": self._settings.api_version,
            "timeout": config.timeout,
            "retry": config.retry,
            "max_response_bytes": config.max_response_bytes,
        }

    def __repr__(self) -> str:
        # Never the credentials or their token: only where the client points.
        return (
            f"{type(self).__name__}(project={self.project!r}, location={self.location!r}, "
            f"api_endpoint={shown_url(self.api_endpoint)!r})"
        )


async def _no_items() -> AsyncIterator[EvaluationItem]:
    return
    yield


def _no_result(_: dict[str, Any]) -> None:
    return None


def _set_of(response: dict[str, Any]) -> EvaluationSet:
    return EvaluationSet.from_wire(response)


def _set_revision_of(response: dict[str, Any]) -> EvaluationSetRevision:
    return EvaluationSetRevision.from_wire(response)


JSONL_TYPE = "application/jsonl"


def _run_timed_out(waiter: Waiter, run: EvaluationRun) -> WaitTimeoutError:
    return WaitTimeoutError(f"run {run.name} still {run.state} after {waiter.timeout} s", run=run)


def _next_batch(items: Iterator[EvaluationItem], size: int) -> list[EvaluationItem]:
    """The next ``size`` items built, with the collector held while they are (each burst of
    allocations set it off, and it walked every young object again without finding a cycle)."""
    with collector_paused():
        return list(islice(items, size))
