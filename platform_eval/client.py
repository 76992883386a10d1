"""``Client`` and ``AsyncClient``: flat methods over the evaluation resources.

Both clients take the same arguments and have the same methods; the async ones are awaited.
Each method accepts a full resource name or a bare id, and typed objects or plain dicts.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import Any, TypeVar

import httpx
from google.auth import credentials as ga_credentials

from ._auth import Authenticator
from ._config import Settings, resolve_settings, shown_url
from ._env import mebibytes
from ._gc import collector_paused
from ._names import EXPERIMENTS, ITEMS, METRICS, RUNS, SETS, ResourceRef
from ._operations import (
    ITEMS_PAGE_SIZE,
    RESULTS_PAGE_SIZE,
    MetricLike,
    Op,
    Operations,
    to_metric,
)
from ._pagination import AsyncPager, Page, Pager, PageTokens
from ._result_items import ExpectedResults, is_result, result_set_name
from ._retry import RetryPolicy
from ._transport import (
    DEFAULT_MAX_RESPONSE_BYTES,
    MAX_RESPONSE_MB_ENV,
    ApiCall,
    AsyncTransport,
    SyncTransport,
    TransportConfig,
)
from ._waiting import Waiter
from .errors import (
    ConfigurationError,
    InvalidArgument,
    NotFound,
    WaitTimeoutError,
)
from .lro import AsyncOperationFuture, OperationFuture
from .types import (
    EvaluateDatasetRequest,
    EvaluateDatasetResponse,
    EvaluateInstancesRequest,
    EvaluateInstancesResponse,
    EvaluationExperiment,
    EvaluationItem,
    EvaluationItemRevision,
    EvaluationMetric,
    EvaluationRun,
    EvaluationSet,
    EvaluationSetRevision,
    GenerateInstanceRubricsRequest,
    GenerateInstanceRubricsResponse,
    GenerateLossClustersRequest,
    GenerateLossClustersResponse,
    GenerateUserScenariosRequest,
    GenerateUserScenariosResponse,
    Operation,
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

    def to_async(self) -> AsyncClient:
        """A new AsyncClient with this client's project, endpoint, credentials and retries.

        Jobs use it to run bulk work concurrently from a sync client; close it when done.
        """
        clone = AsyncClient.__new__(AsyncClient)
        clone._settings = self._settings
        clone._transport_config = self._transport_config
        clone._ops = self._ops
        clone._transport = AsyncTransport(self._transport_config)
        clone._identity = self._identity
        return clone

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


class Client(_ClientBase):
    """Synchronous client. Use as a context manager, or call ``close()``."""

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
        http_client: httpx.Client | None = None,
        max_response_bytes: int | None = None,
    ) -> None:
        super().__init__(
            project,
            location,
            credentials=credentials,
            api_endpoint=api_endpoint,
            api_version=api_version,
            timeout=timeout,
            max_retries=max_retries,
            retry=retry,
            max_response_bytes=max_response_bytes,
        )
        self._transport = SyncTransport(self._transport_config, http_client)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the HTTP connections; the client is not used after."""
        self._transport.close()

    def _run(self, op: Op[T]) -> T:
        return op.read(self._transport.request(op.call))

    def _pager(self, page_op: Callable[[str | None], Op[Page[T]]]) -> Pager[T]:
        return Pager(lambda token: self._run(page_op(token)))

    def run_progress(self, run: ResourceRef) -> tuple[int, int] | None:
        """(items done, items in all) of a run the emulator is scoring; None where not known
        (the service reports no progress, and a run not started yet has none)."""
        op = self._run_progress(run)
        if op is None:
            return None
        try:
            return self._run(op)
        except NotFound:
            return None

    def run_judge_usage(self, run: ResourceRef) -> dict[str, Any] | None:
        """What judging a run cost, as the emulator's model judge counted it (model calls,
        cache hits, tokens; per metric and per case): None where not known (the service, a
        run nobody judged, an emulator without a model judge). Emulator only."""
        op = self._run_judge_usage(run)
        if op is None:
            return None
        try:
            return self._run(op)
        except NotFound:
            return None

    def recorded_telemetry(self) -> list[dict[str, Any]]:
        """The OTLP exports the emulator received at ``/v1/traces`` and ``/v1/logs``, in order,
        as OTLP JSON (``traces.records_from_data`` reads them). Emulator only."""
        return self._run(self._recorded_telemetry())

    def metric_refusals(
        self, metrics: Sequence[MetricLike], rubric_types: Sequence[str | None] | None = None
    ) -> list[dict[str, str]] | None:
        """Which of ``metrics`` the emulator cannot compute with the judges it has, each as
        ``{"metric", "reason", "kind"}`` (kind: ``unknown``, ``service``, ``judge`` or ``code``);
        [] when it computes them all; None for the service, which answers when a run is
        created. ``rubric_types``: the types of the rubrics the cases carry, where known.
        Emulator only: asked before anything is uploaded."""
        op = self._metric_refusals(metrics, rubric_types)
        if op is None:
            return None
        return self._run(op)

    # -- operations -----------------------------------------------------------------------

    def _future(
        self, operation: Operation, parse: Callable[[dict[str, Any]], T]
    ) -> OperationFuture[T]:
        return OperationFuture(operation, self.get_operation, parse)

    def _operation(
        self, op: Op[Operation], parse: Callable[[dict[str, Any]], T], wait: bool
    ) -> OperationFuture[T]:
        """The long-running operation ``op`` starts, as a future (waited for when ``wait``)."""
        future = self._future(self._run(op), parse)
        if wait:
            future.wait()
        return future

    def _deleting(self, op: Op[Operation], wait: bool) -> OperationFuture[None]:
        return self._operation(op, _no_result, wait)

    def get_operation(self, operation: ResourceRef) -> Operation:
        """A long-running operation, by its name (``{resource}/operations/{id}``)."""
        return self._run(self._ops.get_operation(operation))

    def wait_operation(self, operation: ResourceRef, *, timeout: float | None = None) -> Operation:
        """The service's own wait: answers once the operation is done or ``timeout`` passed."""
        return self._run(self._ops.wait_operation(operation, timeout))

    def list_operations(
        self, resource: ResourceRef, *, filter: str | None = None, page_size: int | None = None
    ) -> Pager[Operation]:
        """The long-running operations of one resource (an item, set, run or metric)."""
        return self._pager(
            lambda token: self._ops.list_operations_page(resource, filter, page_size, token)
        )

    def delete_operation(self, operation: ResourceRef) -> None:
        """Forgets a finished operation (the work it did is not undone)."""
        self._run(self._ops.delete_operation(operation))

    # -- evaluationItems ------------------------------------------------------------------

    def create_item(
        self, item: EvaluationItem | Mapping[str, Any], *, request_id: str | None = None
    ) -> EvaluationItem:
        """Creates an evaluation item; the server assigns its id."""
        return self._run(self._ops.create_item(item, request_id))

    def get_item(self, item: ResourceRef, *, read_payload: bool = True) -> EvaluationItem:
        """Gets an item; a payload kept in Cloud Storage (``gcsUri``) is read in too."""
        found = self._run(self._ops.get_item(item))
        return self._with_payload(found) if read_payload else found

    def list_items(
        self,
        *,
        filter: str | None = None,
        page_size: int | None = None,
        order_by: str | None = None,
    ) -> Pager[EvaluationItem]:
        """Every evaluation item of the location, page after page as iterated (``filter``,
        ``page_size``)."""
        return self._pager(self._page_op(ITEMS, EvaluationItem, filter, page_size, order_by))

    def delete_item(
        self, item: ResourceRef, *, wait: bool = False, force: bool = False
    ) -> OperationFuture[None]:
        """Deletes an item: a long-running operation, waited on with ``wait=True``. An item
        with revisions is refused (FailedPrecondition) unless ``force`` deletes them too; one
        a set revision still holds is refused even then."""
        return self._deleting(self._ops.delete_item(item, force), wait)

    # -- evaluationSets -------------------------------------------------------------------

    def create_set(
        self,
        evaluation_set: EvaluationSet | Mapping[str, Any] | None = None,
        *,
        display_name: str | None = None,
        items: Iterable[Any] | None = None,
        request_id: str | None = None,
    ) -> EvaluationSet:
        """Creates a set from an EvaluationSet, or from ``display_name`` and ``items``."""
        built = self._ops.build_set(evaluation_set, display_name, items)
        return self._run(self._ops.create_set(built, request_id))

    def import_set(
        self,
        items: Iterable[EvaluationItem | Mapping[str, Any]] | None = None,
        *,
        gcs_destination: str,
        display_name: str | None = None,
        evaluation_set: EvaluationSet | Mapping[str, Any] | None = None,
        source_uri: str | None = None,
        staging_uri: str | None = None,
        content: bytes | None = None,
        request_id: str | None = None,
        wait: bool = False,
    ) -> OperationFuture[EvaluationSet]:
        """Creates a set with its items in one call (``evaluationSets:import``).

        ``items`` (or ``content``, items already as JSON Lines) travel inline (under 4 MB), or
        are uploaded to ``staging_uri`` first; ``source_uri`` imports a JSONL object already in
        Cloud Storage. The service
        writes each item's payload under ``gcs_destination``. Returns the long-running
        operation; its ``wait()`` returns the new EvaluationSet.
        """
        request, staged = self._ops.build_import(
            items,
            evaluation_set=evaluation_set,
            display_name=display_name,
            gcs_destination=gcs_destination,
            source_uri=source_uri,
            staging_uri=staging_uri,
            content=content,
        )
        if staged is not None:
            self._run(self._ops.write_object(*staged, JSONL_TYPE))
        future = self._future(self._run(self._ops.import_set(request, request_id)), _set_of)
        if wait:
            future.wait()
        return future

    def get_set(self, evaluation_set: ResourceRef) -> EvaluationSet:
        """An evaluation set, by name or id."""
        return self._run(self._ops.get_set(evaluation_set))

    def list_sets(
        self,
        *,
        filter: str | None = None,
        page_size: int | None = None,
        order_by: str | None = None,
    ) -> Pager[EvaluationSet]:
        """Every evaluation set of the location, page after page as iterated."""
        return self._pager(self._page_op(SETS, EvaluationSet, filter, page_size, order_by))

    def update_set(
        self,
        evaluation_set: EvaluationSet | Mapping[str, Any],
        *,
        update_mask: Sequence[str] | None = None,
    ) -> EvaluationSet:
        """Patches a set; without ``update_mask``, the fields set on ``evaluation_set``."""
        return self._run(self._ops.update_set(evaluation_set, update_mask))

    def delete_set(
        self, evaluation_set: ResourceRef, *, wait: bool = False, force: bool = False
    ) -> OperationFuture[None]:
        """Deletes a set (not its items): a long-running operation. A set with revisions is
        refused (FailedPrecondition) unless ``force`` deletes them too."""
        return self._deleting(self._ops.delete_set(evaluation_set, force), wait)

    # -- revisions (v1beta1) ----------------------------------------------------------------

    def create_set_revision(
        self, evaluation_set: ResourceRef, *, request_id: str | None = None, wait: bool = False
    ) -> OperationFuture[EvaluationSetRevision]:
        """Freezes a set and its items (payloads included): a long-running operation whose
        ``wait()`` returns the revision. ``create_run(evaluation_set=revision)`` evaluates
        the frozen items, whatever changes afterwards."""
        operation = self._run(self._ops.create_set_revision(evaluation_set, request_id))
        future = self._future(operation, _set_revision_of)
        if wait:
            future.wait()
        return future

    def get_set_revision(self, revision: ResourceRef) -> EvaluationSetRevision:
        """A set revision, by its name (``evaluationSets/{set}/revisions/{revision}``)."""
        return self._run(self._ops.get_set_revision(revision))

    def list_set_revisions(
        self, evaluation_set: ResourceRef, *, page_size: int | None = None
    ) -> Pager[EvaluationSetRevision]:
        """A set's revisions, newest first."""
        return self._pager(
            lambda token: self._ops.list_set_revisions_page(evaluation_set, page_size, token)
        )

    def delete_set_revision(
        self, revision: ResourceRef, *, wait: bool = False
    ) -> OperationFuture[None]:
        """Deletes a set revision, and the item revisions no other set revision uses."""
        return self._deleting(self._ops.delete_set_revision(revision), wait)

    def get_item_revision(self, revision: ResourceRef) -> EvaluationItemRevision:
        """An item revision (``evaluationItems/{item}/revisions/{revision}``): the item as a
        set revision froze it, payload included."""
        return self._run(self._ops.get_item_revision(revision))

    # -- evaluationExperiments ------------------------------------------------------------

    def create_experiment(
        self,
        experiment: EvaluationExperiment | Mapping[str, Any],
        *,
        request_id: str | None = None,
    ) -> EvaluationExperiment:
        """Groups runs to compare (``display_name``, ``evaluation_runs``, labels, metadata)."""
        return self._run(self._ops.create_experiment(experiment, request_id))

    def get_experiment(self, experiment: ResourceRef) -> EvaluationExperiment:
        """An evaluation experiment, by name or id."""
        return self._run(self._ops.get_experiment(experiment))

    def list_experiments(
        self,
        *,
        filter: str | None = None,
        page_size: int | None = None,
        order_by: str | None = None,
    ) -> Pager[EvaluationExperiment]:
        """Every evaluation experiment of the location, page after page as iterated."""
        return self._pager(
            self._page_op(EXPERIMENTS, EvaluationExperiment, filter, page_size, order_by)
        )

    def update_experiment(
        self,
        experiment: EvaluationExperiment | Mapping[str, Any],
        *,
        update_mask: Sequence[str] | None = None,
    ) -> EvaluationExperiment:
        """Patches an experiment; without ``update_mask``, the fields set on ``experiment``."""
        return self._run(self._ops.update_experiment(experiment, update_mask))

    def delete_experiment(
        self, experiment: ResourceRef, *, wait: bool = False
    ) -> OperationFuture[None]:
        """Deletes an evaluation experiment: a long-running operation."""
        return self._deleting(self._ops.delete_experiment(experiment), wait)

    # -- evaluationMetrics ----------------------------------------------------------------

    def create_metric(
        self,
        metric: EvaluationMetric | Mapping[str, Any],
        *,
        request_id: str | None = None,
        metric_id: str | None = None,
    ) -> EvaluationMetric:
        """Registers a metric (an LLM-based or custom code one) that runs name by its
        resource name (``EvaluationRunMetric.metric_resource_name``); ``metric_id`` chooses
        the last part of that name (1-63 of a-z, 0-9 and -, a letter first), else the
        service does."""
        return self._run(self._ops.create_metric(metric, request_id, metric_id))

    def get_metric(self, metric: ResourceRef) -> EvaluationMetric:
        """A registered metric, by name or id."""
        return self._run(self._ops.get_metric(metric))

    def list_metrics(
        self,
        *,
        filter: str | None = None,
        page_size: int | None = None,
        order_by: str | None = None,
    ) -> Pager[EvaluationMetric]:
        """Every registered metric of the location, page after page as iterated."""
        return self._pager(self._page_op(METRICS, EvaluationMetric, filter, page_size, order_by))

    def delete_metric(self, metric: ResourceRef, *, wait: bool = False) -> OperationFuture[None]:
        """Deletes a registered metric: a long-running operation."""
        return self._deleting(self._ops.delete_metric(metric), wait)

    # -- evaluationRuns -------------------------------------------------------------------

    def create_run(
        self,
        run: EvaluationRun | Mapping[str, Any] | None = None,
        *,
        evaluation_set: ResourceRef | None = None,
        metrics: Sequence[MetricLike] | None = None,
        display_name: str | None = None,
        labels: Mapping[str, str] | None = None,
        request_id: str | None = None,
        metadata: Any = None,
        inference_configs: Mapping[str, Any] | None = None,
    ) -> EvaluationRun:
        """Starts a run from an EvaluationRun, or from ``evaluation_set`` and ``metrics``
        (``metadata``: the run's free-form field for the caller's own tracking;
        ``inference_configs``: candidate name -> the model or agent the service runs to produce
        that candidate's responses)."""
        built = self._ops.build_run(
            run,
            evaluation_set=evaluation_set,
            metrics=metrics,
            display_name=display_name,
            labels=labels,
            metadata=metadata,
            inference_configs=inference_configs,
        )
        return self._run(self._ops.create_run(built, request_id))

    def get_run(self, run: ResourceRef) -> EvaluationRun:
        """A run, by name or id: its state, and its results' summary once done."""
        return self._run(self._ops.get_run(run))

    def list_runs(
        self,
        *,
        filter: str | None = None,
        page_size: int | None = None,
        order_by: str | None = None,
    ) -> Pager[EvaluationRun]:
        """Every run of the location, page after page as iterated (``filter``, ``order_by``)."""
        return self._pager(self._page_op(RUNS, EvaluationRun, filter, page_size, order_by))

    def cancel_run(self, run: ResourceRef) -> None:
        """Asks the service to stop a run; it ends CANCELLED (a done run is left as it is)."""
        self._run(self._ops.cancel_run(run))

    def evaluate_instances(
        self, request: EvaluateInstancesRequest | Mapping[str, Any]
    ) -> EvaluateInstancesResponse:
        """Scores one instance online (``:evaluateInstances``): ``metrics`` (or
        ``metric_sources``) and an ``instance``, answered with ``metric_results``; or one of
        the service's per-metric inputs as a mapping (``{"bleuInput": {...}}``), answered with
        its result field. The emulator computes them with the engine a run uses."""
        return self._run(self._ops.evaluate_instances(request))

    def generate_rubrics(
        self, request: GenerateInstanceRubricsRequest | Mapping[str, Any]
    ) -> GenerateInstanceRubricsResponse:
        """Rubrics a model writes for one prompt (``:generateInstanceRubrics``): by a
        predefined metric's recipe (``predefined_rubric_generation_spec``), a registered
        metric's, or the request's own ``rubric_generation_spec.prompt_template``."""
        return self._run(self._ops.generate_rubrics(request))

    def evaluate_dataset(
        self, request: EvaluateDatasetRequest | Mapping[str, Any], *, wait: bool = False
    ) -> OperationFuture[EvaluateDatasetResponse]:
        """Scores every row of a Cloud Storage dataset by ``metrics`` (``:evaluateDataset``),
        writing the results under ``output_config``: a long-running operation whose
        ``wait()`` returns the aggregates and the output directory."""
        return self._operation(
            self._ops.evaluate_dataset(request), EvaluateDatasetResponse.from_wire, wait
        )

    def generate_user_scenarios(
        self, request: GenerateUserScenariosRequest | Mapping[str, Any]
    ) -> GenerateUserScenariosResponse:
        """User scenarios (a starting prompt and a conversation plan each) a model writes for
        an agent system (``:generateUserScenarios``): ``agents`` by id, ``root_agent_id`` and
        ``user_scenario_generation_config`` (count at most 100, instruction, environment)."""
        return self._run(self._ops.generate_user_scenarios(request))

    def generate_loss_clusters(
        self, request: GenerateLossClustersRequest | Mapping[str, Any], *, wait: bool = False
    ) -> OperationFuture[GenerateLossClustersResponse]:
        """Clusters the failed rubric verdicts of a metric into a two-level taxonomy
        (``:generateLossClusters``), for results given inline or a set's RESULT items: a
        long-running operation whose ``wait()`` returns the GenerateLossClustersResponse."""
        return self._operation(
            self._ops.generate_loss_clusters(request), GenerateLossClustersResponse.from_wire, wait
        )

    def delete_run(self, run: ResourceRef, *, wait: bool = False) -> OperationFuture[None]:
        """Deletes a run (cancelling it if it is running): a long-running operation."""
        return self._deleting(self._ops.delete_run(run), wait)

    def wait_for_run(
        self,
        run: ResourceRef,
        *,
        timeout: float | None = None,
        poll_interval: float = 1.0,
        max_poll_interval: float = 10.0,
        on_progress: ProgressCallback | None = None,
    ) -> EvaluationRun:
        """Polls until the run is SUCCEEDED, FAILED or CANCELLED and returns it.

        Raises WaitTimeoutError after ``timeout`` seconds (the run keeps going).
        """
        waiter = Waiter(timeout, poll_interval, max_poll_interval)
        while True:
            current = self.get_run(run)
            if on_progress:
                on_progress(current)
            if current.done:
                return current
            delay = waiter.next_delay()
            if delay is None:
                raise _run_timed_out(waiter, current)
            time.sleep(delay)

    def get_results(self, run: ResourceRef) -> list[EvaluationItem]:
        """Every RESULT item of a finished run, in the order of its result set."""
        expected, items = self._results(run, _KEPT)
        return expected.ordered(items) if expected else []

    def iter_results(self, run: ResourceRef) -> Iterator[EvaluationItem]:
        """Every RESULT item of a finished run, lazily, in the order the server lists them.

        Items come a page of 250 at a time (the next page is requested while this one is
        read) and are built from the page's JSON a few at a time, so memory holds about two
        pages of JSON, not the run.
        """
        return self._results(run, _STREAMED)[1]

    def _results(
        self, run: ResourceRef, reading: _Reading
    ) -> tuple[ExpectedResults | None, Iterator[EvaluationItem]]:
        current = run if isinstance(run, EvaluationRun) and run.done else self.get_run(run)
        set_name = result_set_name(current)
        if set_name is None:
            return None, iter(())
        expected = ExpectedResults(self.get_set(set_name).evaluation_items or [])
        return expected, self._read_results(current.name or "", expected, reading)

    def _read_results(
        self, run_name: str, expected: ExpectedResults, reading: _Reading
    ) -> Iterator[EvaluationItem]:
        # Payloads in Cloud Storage, and items read one by one, are read RESULTS_CONCURRENCY
        # at a time, as AsyncClient reads them.
        with ThreadPoolExecutor(
            max_workers=RESULTS_CONCURRENCY, thread_name_prefix="platform-eval-results"
        ) as readers:
            pages = self._prefetched(
                lambda token: self._ops.result_items_page(run_name, token, reading.page_size)
            )
            try:
                for page in pages:
                    taken = expected.take(page)
                    while batch := _next_batch(taken, reading.batch):
                        if any(self._ops.payload_uri(item) for item in batch):
                            yield from readers.map(self._with_payload, batch)
                        else:
                            yield from batch
                    if expected.complete:
                        break
            except InvalidArgument:
                pass  # a server that cannot filter items by run: each is read by name below
            for item in readers.map(self.get_item, expected.missing()):
                if is_result(item):
                    yield item

    def _with_payload(self, item: EvaluationItem) -> EvaluationItem:
        uri = self._ops.payload_uri(item)
        if uri is None:
            return item
        return self._ops.with_payload(item, self._run(self._ops.read_object(uri)))

    def _prefetched(self, page_op: Callable[[str | None], Op[P]]) -> Iterator[P]:
        """Pages in order; the next one is requested while the caller reads this one."""
        seen = PageTokens()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="platform-eval-pages") as pool:
            op = page_op(None)
            pending = pool.submit(self._transport.request, op.call)
            while True:
                body = pending.result()
                token = seen.next_of(body)
                if token:
                    following = page_op(token)
                    pending = pool.submit(self._transport.request, following.call)
                page = op.read(body)
                del body  # what the page holds is all the caller needs
                yield page
                if not token:
                    return
                op = following


class AsyncClient(_ClientBase):
    """Asynchronous client. Use as an async context manager, or await ``close()``."""

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
        http_client: httpx.AsyncClient | None = None,
        max_response_bytes: int | None = None,
    ) -> None:
        super().__init__(
            project,
            location,
            credentials=credentials,
            api_endpoint=api_endpoint,
            api_version=api_version,
            timeout=timeout,
            max_retries=max_retries,
            retry=retry,
            max_response_bytes=max_response_bytes,
        )
        self._transport = AsyncTransport(self._transport_config, http_client)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._transport.close()

    async def _run(self, op: Op[T]) -> T:
        return op.read(await self._transport.request(op.call))

    def _pager(self, page_op: Callable[[str | None], Op[Page[T]]]) -> AsyncPager[T]:
        return AsyncPager(lambda token: self._run(page_op(token)))

    async def run_progress(self, run: ResourceRef) -> tuple[int, int] | None:
        """(items done, items in all) of a run (``Client.run_progress``)."""
        op = self._run_progress(run)
        if op is None:
            return None
        try:
            return await self._run(op)
        except NotFound:
            return None

    async def run_judge_usage(self, run: ResourceRef) -> dict[str, Any] | None:
        """What judging a run cost (``Client.run_judge_usage``)."""
        op = self._run_judge_usage(run)
        if op is None:
            return None
        try:
            return await self._run(op)
        except NotFound:
            return None

    async def recorded_telemetry(self) -> list[dict[str, Any]]:
        """The OTLP exports the emulator received (``Client.recorded_telemetry``)."""
        return await self._run(self._recorded_telemetry())

    async def metric_refusals(
        self, metrics: Sequence[MetricLike], rubric_types: Sequence[str | None] | None = None
    ) -> list[dict[str, str]] | None:
        """Which metrics the emulator cannot compute (``Client.metric_refusals``)."""
        op = self._metric_refusals(metrics, rubric_types)
        if op is None:
            return None
        return await self._run(op)

    # -- operations -----------------------------------------------------------------------

    def _future(
        self, operation: Operation, parse: Callable[[dict[str, Any]], T]
    ) -> AsyncOperationFuture[T]:
        return AsyncOperationFuture(operation, self.get_operation, parse)

    async def _operation(
        self, op: Op[Operation], parse: Callable[[dict[str, Any]], T], wait: bool
    ) -> AsyncOperationFuture[T]:
        future = self._future(await self._run(op), parse)
        if wait:
            await future.wait()
        return future

    async def _deleting(self, op: Op[Operation], wait: bool) -> AsyncOperationFuture[None]:
        return await self._operation(op, _no_result, wait)

    async def get_operation(self, operation: ResourceRef) -> Operation:
        return await self._run(self._ops.get_operation(operation))

    async def wait_operation(
        self, operation: ResourceRef, *, timeout: float | None = None
    ) -> Operation:
        return await self._run(self._ops.wait_operation(operation, timeout))

    def list_operations(
        self, resource: ResourceRef, *, filter: str | None = None, page_size: int | None = None
    ) -> AsyncPager[Operation]:
        return self._pager(
            lambda token: self._ops.list_operations_page(resource, filter, page_size, token)
        )

    async def delete_operation(self, operation: ResourceRef) -> None:
        await self._run(self._ops.delete_operation(operation))

    # -- evaluationItems ------------------------------------------------------------------

    async def create_item(
        self, item: EvaluationItem | Mapping[str, Any], *, request_id: str | None = None
    ) -> EvaluationItem:
        return await self._run(self._ops.create_item(item, request_id))

    async def get_item(self, item: ResourceRef, *, read_payload: bool = True) -> EvaluationItem:
        found = await self._run(self._ops.get_item(item))
        return await self._with_payload(found) if read_payload else found

    async def _with_payload(self, item: EvaluationItem) -> EvaluationItem:
        """The item with its payload read from Cloud Storage, where it keeps it there."""
        uri = self._ops.payload_uri(item)
        if uri is None:
            return item
        return self._ops.with_payload(item, await self._run(self._ops.read_object(uri)))

    def list_items(
        self,
        *,
        filter: str | None = None,
        page_size: int | None = None,
        order_by: str | None = None,
    ) -> AsyncPager[EvaluationItem]:
        return self._pager(self._page_op(ITEMS, EvaluationItem, filter, page_size, order_by))

    async def delete_item(
        self, item: ResourceRef, *, wait: bool = False, force: bool = False
    ) -> AsyncOperationFuture[None]:
        """Deletes an item; see ``Client.delete_item``."""
        return await self._deleting(self._ops.delete_item(item, force), wait)

    # -- evaluationSets -------------------------------------------------------------------

    async def create_set(
        self,
        evaluation_set: EvaluationSet | Mapping[str, Any] | None = None,
        *,
        display_name: str | None = None,
        items: Iterable[Any] | None = None,
        request_id: str | None = None,
    ) -> EvaluationSet:
        built = self._ops.build_set(evaluation_set, display_name, items)
        return await self._run(self._ops.create_set(built, request_id))

    async def import_set(
        self,
        items: Iterable[EvaluationItem | Mapping[str, Any]] | None = None,
        *,
        gcs_destination: str,
        display_name: str | None = None,
        evaluation_set: EvaluationSet | Mapping[str, Any] | None = None,
        source_uri: str | None = None,
        staging_uri: str | None = None,
        content: bytes | None = None,
        request_id: str | None = None,
        wait: bool = False,
    ) -> AsyncOperationFuture[EvaluationSet]:
        request, staged = self._ops.build_import(
            items,
            evaluation_set=evaluation_set,
            display_name=display_name,
            gcs_destination=gcs_destination,
            source_uri=source_uri,
            staging_uri=staging_uri,
            content=content,
        )
        if staged is not None:
            await self._run(self._ops.write_object(*staged, JSONL_TYPE))
        operation = await self._run(self._ops.import_set(request, request_id))
        future = self._future(operation, _set_of)
        if wait:
            await future.wait()
        return future

    async def get_set(self, evaluation_set: ResourceRef) -> EvaluationSet:
        return await self._run(self._ops.get_set(evaluation_set))

    def list_sets(
        self,
        *,
        filter: str | None = None,
        page_size: int | None = None,
        order_by: str | None = None,
    ) -> AsyncPager[EvaluationSet]:
        return self._pager(self._page_op(SETS, EvaluationSet, filter, page_size, order_by))

    async def update_set(
        self,
        evaluation_set: EvaluationSet | Mapping[str, Any],
        *,
        update_mask: Sequence[str] | None = None,
    ) -> EvaluationSet:
        return await self._run(self._ops.update_set(evaluation_set, update_mask))

    async def delete_set(
        self, evaluation_set: ResourceRef, *, wait: bool = False, force: bool = False
    ) -> AsyncOperationFuture[None]:
        """Deletes a set; see ``Client.delete_set``."""
        return await self._deleting(self._ops.delete_set(evaluation_set, force), wait)

    # -- revisions (v1beta1) ----------------------------------------------------------------

    async def create_set_revision(
        self, evaluation_set: ResourceRef, *, request_id: str | None = None, wait: bool = False
    ) -> AsyncOperationFuture[EvaluationSetRevision]:
        operation = await self._run(self._ops.create_set_revision(evaluation_set, request_id))
        future = self._future(operation, _set_revision_of)
        if wait:
            await future.wait()
        return future

    async def get_set_revision(self, revision: ResourceRef) -> EvaluationSetRevision:
        return await self._run(self._ops.get_set_revision(revision))

    def list_set_revisions(
        self, evaluation_set: ResourceRef, *, page_size: int | None = None
    ) -> AsyncPager[EvaluationSetRevision]:
        return self._pager(
            lambda token: self._ops.list_set_revisions_page(evaluation_set, page_size, token)
        )

    async def delete_set_revision(
        self, revision: ResourceRef, *, wait: bool = False
    ) -> AsyncOperationFuture[None]:
        return await self._deleting(self._ops.delete_set_revision(revision), wait)

    async def get_item_revision(self, revision: ResourceRef) -> EvaluationItemRevision:
        return await self._run(self._ops.get_item_revision(revision))

    # -- evaluationExperiments ------------------------------------------------------------

    async def create_experiment(
        self,
        experiment: EvaluationExperiment | Mapping[str, Any],
        *,
        request_id: str | None = None,
    ) -> EvaluationExperiment:
        return await self._run(self._ops.create_experiment(experiment, request_id))

    async def get_experiment(self, experiment: ResourceRef) -> EvaluationExperiment:
        return await self._run(self._ops.get_experiment(experiment))

    def list_experiments(
        self,
        *,
        filter: str | None = None,
        page_size: int | None = None,
        order_by: str | None = None,
    ) -> AsyncPager[EvaluationExperiment]:
        return self._pager(
            self._page_op(EXPERIMENTS, EvaluationExperiment, filter, page_size, order_by)
        )

    async def update_experiment(
        self,
        experiment: EvaluationExperiment | Mapping[str, Any],
        *,
        update_mask: Sequence[str] | None = None,
    ) -> EvaluationExperiment:
        return await self._run(self._ops.update_experiment(experiment, update_mask))

    async def delete_experiment(
        self, experiment: ResourceRef, *, wait: bool = False
    ) -> AsyncOperationFuture[None]:
        return await self._deleting(self._ops.delete_experiment(experiment), wait)

    # -- evaluationMetrics ----------------------------------------------------------------

    async def create_metric(
        self,
        metric: EvaluationMetric | Mapping[str, Any],
        *,
        request_id: str | None = None,
        metric_id: str | None = None,
    ) -> EvaluationMetric:
        return await self._run(self._ops.create_metric(metric, request_id, metric_id))

    async def get_metric(self, metric: ResourceRef) -> EvaluationMetric:
        return await self._run(self._ops.get_metric(metric))

    def list_metrics(
        self,
        *,
        filter: str | None = None,
        page_size: int | None = None,
        order_by: str | None = None,
    ) -> AsyncPager[EvaluationMetric]:
        return self._pager(self._page_op(METRICS, EvaluationMetric, filter, page_size, order_by))

    async def delete_metric(
        self, metric: ResourceRef, *, wait: bool = False
    ) -> AsyncOperationFuture[None]:
        return await self._deleting(self._ops.delete_metric(metric), wait)

    # -- evaluationRuns -------------------------------------------------------------------

    async def create_run(
        self,
        run: EvaluationRun | Mapping[str, Any] | None = None,
        *,
        evaluation_set: ResourceRef | None = None,
        metrics: Sequence[MetricLike] | None = None,
        display_name: str | None = None,
        labels: Mapping[str, str] | None = None,
        request_id: str | None = None,
        metadata: Any = None,
        inference_configs: Mapping[str, Any] | None = None,
    ) -> EvaluationRun:
        built = self._ops.build_run(
            run,
            evaluation_set=evaluation_set,
            metrics=metrics,
            display_name=display_name,
            labels=labels,
            metadata=metadata,
            inference_configs=inference_configs,
        )
        return await self._run(self._ops.create_run(built, request_id))

    async def get_run(self, run: ResourceRef) -> EvaluationRun:
        return await self._run(self._ops.get_run(run))

    def list_runs(
        self,
        *,
        filter: str | None = None,
        page_size: int | None = None,
        order_by: str | None = None,
    ) -> AsyncPager[EvaluationRun]:
        return self._pager(self._page_op(RUNS, EvaluationRun, filter, page_size, order_by))

    async def cancel_run(self, run: ResourceRef) -> None:
        await self._run(self._ops.cancel_run(run))

    async def evaluate_instances(
        self, request: EvaluateInstancesRequest | Mapping[str, Any]
    ) -> EvaluateInstancesResponse:
        return await self._run(self._ops.evaluate_instances(request))

    async def generate_rubrics(
        self, request: GenerateInstanceRubricsRequest | Mapping[str, Any]
    ) -> GenerateInstanceRubricsResponse:
        return await self._run(self._ops.generate_rubrics(request))

    async def evaluate_dataset(
        self, request: EvaluateDatasetRequest | Mapping[str, Any], *, wait: bool = False
    ) -> AsyncOperationFuture[EvaluateDatasetResponse]:
        return await self._operation(
            self._ops.evaluate_dataset(request), EvaluateDatasetResponse.from_wire, wait
        )

    async def generate_user_scenarios(
        self, request: GenerateUserScenariosRequest | Mapping[str, Any]
    ) -> GenerateUserScenariosResponse:
        return await self._run(self._ops.generate_user_scenarios(request))

    async def generate_loss_clusters(
        self, request: GenerateLossClustersRequest | Mapping[str, Any], *, wait: bool = False
    ) -> AsyncOperationFuture[GenerateLossClustersResponse]:
        return await self._operation(
            self._ops.generate_loss_clusters(request), GenerateLossClustersResponse.from_wire, wait
        )

    async def delete_run(
        self, run: ResourceRef, *, wait: bool = False
    ) -> AsyncOperationFuture[None]:
        return await self._deleting(self._ops.delete_run(run), wait)

    async def wait_for_run(
        self,
        run: ResourceRef,
        *,
        timeout: float | None = None,
        poll_interval: float = 1.0,
        max_poll_interval: float = 10.0,
        on_progress: ProgressCallback | None = None,
    ) -> EvaluationRun:
        waiter = Waiter(timeout, poll_interval, max_poll_interval)
        while True:
            current = await self.get_run(run)
            if on_progress:
                on_progress(current)
            if current.done:
                return current
            delay = waiter.next_delay()
            if delay is None:
                raise _run_timed_out(waiter, current)
            await asyncio.sleep(delay)

    async def get_results(self, run: ResourceRef) -> list[EvaluationItem]:
        expected, items = await self._results(run, _KEPT)
        return expected.ordered([item async for item in items]) if expected else []

    async def iter_results(self, run: ResourceRef) -> AsyncIterator[EvaluationItem]:
        """Every RESULT item of a finished run, lazily (``Client.iter_results``)."""
        _, items = await self._results(run, _STREAMED)
        async for item in items:
            yield item

    async def _results(
        self, run: Any, reading: _Reading
    ) -> tuple[ExpectedResults | None, AsyncIterator[EvaluationItem]]:
        current = run if isinstance(run, EvaluationRun) and run.done else await self.get_run(run)
        set_name = result_set_name(current)
        if set_name is None:
            return None, _no_items()
        expected = ExpectedResults((await self.get_set(set_name)).evaluation_items or [])
        return expected, self._read_results(current.name or "", expected, reading)

    async def _read_results(
        self, run_name: str, expected: ExpectedResults, reading: _Reading
    ) -> AsyncIterator[EvaluationItem]:
        limit = asyncio.Semaphore(RESULTS_CONCURRENCY)

        async def limited(read: Awaitable[EvaluationItem]) -> EvaluationItem:
            async with limit:
                return await read

        pages = self._prefetched(
            lambda token: self._ops.result_items_page(run_name, token, reading.page_size)
        )
        try:
            async for page in pages:
                taken = expected.take(page)
                while True:
                    # Built in a thread, a batch at a time, so the event loop keeps the next
                    # page's request moving and memory holds a batch, not the page.
                    batch = await asyncio.to_thread(_next_batch, taken, reading.batch)
                    if not batch:
                        break
                    if any(self._ops.payload_uri(item) for item in batch):
                        batch = await asyncio.gather(
                            *(limited(self._with_payload(i)) for i in batch)
                        )
                    for item in batch:
                        yield item
                if expected.complete:
                    break
        except InvalidArgument:
            pass  # a server that cannot filter items by run: each is read by name below
        missing = expected.missing()
        for item in await asyncio.gather(*(limited(self.get_item(n)) for n in missing)):
            if is_result(item):
                yield item

    async def _prefetched(self, page_op: Callable[[str | None], Op[P]]) -> AsyncIterator[P]:
        """Pages in order; the next one is requested while the caller reads this one."""
        seen = PageTokens()
        op = page_op(None)
        pending = asyncio.ensure_future(self._transport.request(op.call))
        try:
            while True:
                body = await pending
                token = seen.next_of(body)
                if token:
                    following = page_op(token)
                    pending = asyncio.ensure_future(self._transport.request(following.call))
                page = op.read(body)
                del body  # what the page holds is all the caller needs
                yield page
                if not token:
                    return
                op = following
        finally:
            pending.cancel()


def _next_batch(items: Iterator[EvaluationItem], size: int) -> list[EvaluationItem]:
    """The next ``size`` items built, with the collector held while they are (each burst of
    allocations set it off, and it walked every young object again without finding a cycle)."""
    with collector_paused():
        return list(islice(items, size))


def _document_async_client() -> None:
    """AsyncClient's methods say what Client's say: one text for both, never drifting."""
    for name, method in vars(AsyncClient).items():
        if name.startswith("_") or not callable(method) or (method.__doc__ or "").strip():
            continue
        twin = getattr(Client, name, None)
        if twin is not None and twin.__doc__:
            method.__doc__ = twin.__doc__


_document_async_client()
