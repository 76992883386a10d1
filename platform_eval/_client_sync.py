"""``Client``: flat methods over the evaluation resources.

Generated from ``_client_async.py`` by ``tools/unasync_client.py``: edit that file, then run
the tool. Each method is ``AsyncClient``'s, not awaited.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import httpx
from google.auth import credentials as ga_credentials

from ._client_async import AsyncClient
from ._client_base import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    JSONL_TYPE,
    ProgressCallback,
    T,
    _ClientBase,
    _no_result,
    _run_timed_out,
    _set_of,
    _set_revision_of,
)
from ._names import EXPERIMENTS, ITEMS, METRICS, RUNS, SETS, ResourceRef
from ._operations import MetricLike, Op
from ._pagination import Pager, Page
from ._result_reading import SyncResultReading
from ._retry import RetryPolicy
from ._transport import SyncTransport
from ._waiting import Waiter
from .errors import NotFound
from .lro import OperationFuture
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
)


class Client(SyncResultReading, _ClientBase):
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

    def with_options(
        self,
        *,
        timeout: float | None = None,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        max_response_bytes: int | None = None,
    ) -> Client:
        """This client with other call options, sharing its connections: for one call
        (``client.with_options(timeout=5).get_run(run)``) or many. Built through the
        constructor, so an option is checked as there; closing it leaves this client open."""
        options = self._options()
        if timeout is not None:
            options["timeout"] = timeout
        if max_retries is not None or retry is not None:
            options["retry"] = retry or RetryPolicy(max_retries=max_retries or 0)
        if max_response_bytes is not None:
            options["max_response_bytes"] = max_response_bytes
        derived = Client(**options, http_client=self._transport.http_client)
        derived._identity = self._identity
        return derived

    def to_async(self) -> AsyncClient:
        """A new AsyncClient with this client's project, endpoint, credentials and retries.

        Jobs use it to run bulk work concurrently from a sync client; close it when done.
        """
        clone = AsyncClient(**self._options())
        clone._identity = self._identity
        return clone

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

    def wait_operation(
        self, operation: ResourceRef, *, timeout: float | None = None
    ) -> Operation:
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
        self,
        item: EvaluationItem | Mapping[str, Any],
        *,
        request_id: str | None = None,
        gcs_uri: str | None = None,
    ) -> EvaluationItem:
        """Creates an evaluation item; the server assigns its id. With ``gcs_uri``
        (``gs://bucket/object``), the item's payload (its request, or a RESULT item's
        response) is written to that object first and the item made to point at it: how the
        service takes a RESULT item from a client, and how the official SDK uploads a request."""
        if gcs_uri is not None:
            item, payload = self._ops.payload_apart(item, gcs_uri)
            self._run(self._ops.write_object(gcs_uri, payload, "application/json"))
        return self._run(self._ops.create_item(item, request_id))

    def get_item(self, item: ResourceRef, *, read_payload: bool = True) -> EvaluationItem:
        """Gets an item; a payload kept in Cloud Storage (``gcsUri``) is read in too."""
        found = self._run(self._ops.get_item(item))
        return self._with_payload(found) if read_payload else found

    def _with_payload(self, item: EvaluationItem) -> EvaluationItem:
        """The item with its payload read from Cloud Storage, where it keeps it there."""
        uri = self._ops.payload_uri(item)
        if uri is None:
            return item
        return self._ops.with_payload(item, self._run(self._ops.read_object(uri)))

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
        operation = self._run(self._ops.import_set(request, request_id))
        future = self._future(operation, _set_of)
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

    def delete_metric(
        self, metric: ResourceRef, *, wait: bool = False
    ) -> OperationFuture[None]:
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

    def delete_run(
        self, run: ResourceRef, *, wait: bool = False
    ) -> OperationFuture[None]:
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
