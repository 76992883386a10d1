"""Executes evaluation runs in a background thread: PENDING -> RUNNING -> SUCCEEDED/FAILED.

A run scores every REQUEST item of its set with the local metric engine, writes one RESULT item
per request item into a new result set, and records summary metrics. A cancel is noticed
between items: the run ends CANCELLED and keeps the results written so far.
"""

from __future__ import annotations

import json
import logging
import queue
import sqlite3
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, NamedTuple

from pydantic import ValidationError

from .. import metrics
from .._names import ITEMS, REVISIONS, RUNS, SETS
from ..judges.service import Judging, usage_report
from ..metrics import Judges
from ..metrics.model_judge import evaluation
from ..metrics.summary import summarize
from ..types import (
    EvaluationItem,
    EvaluationItemType,
    EvaluationRequest,
    EvaluationResult,
    EvaluationRun,
    EvaluationRunDataSource,
    EvaluationRunResults,
    EvaluationRunState,
    EvaluationSet,
    LossAnalysisResult,
    SummaryMetrics,
    request_mode_problem,
)
from ..types._base import wire_name
from . import loss_analysis
from .backend import (
    RUN_INPUT_BODIES,
    RUN_INPUT_ITEMS,
    ApiError,
    Backend,
    cancelled_status,
    new_id,
    now,
    project_of,
    rpc_status,
    split_name,
)
from .gcs import ObjectStore
from .revisions import Revisions
from .store import failure as store_failure

_logger = logging.getLogger("platform_eval.emulator")


PROGRESS_INTERVAL = 0.2
# The fields the executor reads and writes in an item's and a result's stored JSON, spelled by
# their models (no model is built for them).
_ITEM_TYPE = wire_name(EvaluationItem, "evaluation_item_type")
_ITEM_REQUEST = wire_name(EvaluationItem, "evaluation_request")
_ITEM_RESPONSE = wire_name(EvaluationItem, "evaluation_response")
_ITEM_GCS_URI = wire_name(EvaluationItem, "gcs_uri")
_ITEM_NAME = wire_name(EvaluationItem, "display_name")
_RESULT_REQUEST = wire_name(EvaluationResult, "request")
#: Items prepared beyond the judge calls allowed at once, so that the judge never waits on one.
WINDOW_MARGIN = 2
#: Seconds between tries to record a run's failure the database refused to write.
RECORD_RETRY_INTERVAL = 0.5
#: An executor renews the leases of the runs it executes this often...
HEARTBEAT_INTERVAL = 2.0
#: ...and a lease not renewed for this long is a dead executor's: another one takes the run.
LEASE_STALE_AFTER = 15.0


def _reason(exc: Exception) -> str:
    """What a run's error says of an unexpected exception: the database's own words when the
    store failed (``database or disk is full``), not only an exception class."""
    if isinstance(exc, sqlite3.Error):
        return f"internal error: {store_failure(exc)}"
    return f"internal error: {type(exc).__name__}: {exc}"


class _Scored(NamedTuple):
    """An item's result as the run tallies it: the RESULT item's name, its response (without
    the request's copy, unless loss analysis reads it) and whether it failed."""

    name: str
    response: EvaluationResult | None
    failed: bool


def _done(result: _Scored) -> Future[_Scored]:
    future: Future[_Scored] = Future()
    future.set_result(result)
    return future


def _tally(
    response: EvaluationResult | None, scores: dict[tuple[str | None, str], list[float]]
) -> None:
    for candidate in (response.candidate_results or []) if response else []:
        if candidate.metric and candidate.score is not None:
            scores[candidate.candidate, candidate.metric].append(candidate.score)


#: What the service says of a run none of whose results has a score (cloud-custodian's flight
#: ``vertexai-evaluation-run-filtering``, v1, 2026-08-14: FAILED, code 9, no summary).
NOTHING_TO_AGGREGATE = (
    "No metric scores to aggregate. Please check the result evaluation items for errors."
)


class _CancelledError(Exception):
    pass


class _StoppingError(Exception):
    """The executor is shutting down: the run is left as it is, to resume on next start."""


class _LeaseLostError(Exception):
    """Another executor on the same database took the run over (this one was taken for dead):
    the run is left to it, neither finished nor failed here."""


class RunExecutor:
    def __init__(
        self,
        backend: Backend,
        objects: ObjectStore,
        judges: Judges = metrics.DEFAULT_JUDGES,
    ) -> None:
        self._backend = backend
        self._objects = objects
        self._revisions = Revisions(backend, objects)
        self.judges = judges
        backend.on_cancel_requested(self._cancel_judging)
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        # Test control: when not None, how many more items may be evaluated before the
        # executor holds at the next item boundary.
        self._budget: int | None = None
        self._blocked = False
        self._stopping = False
        self._gate = threading.Condition()
        # Runs that failed while the database refused to record it: {run name: reason}.
        self._unrecorded: dict[str, str] = {}
        self._store_error: str | None = None
        # One executor per run across processes on one database: this one's name, the runs it
        # holds the lease of, those it lost, and those another live executor holds (tried
        # again at the time given, in case that one dies).
        self.owner = uuid.uuid4().hex
        self._held: set[str] = set()
        self._lost: set[str] = set()
        self._deferred: dict[str, float] = {}
        self._heartbeat: threading.Thread | None = None
        self._heartbeat_stop = threading.Event()
        self._next_rescan = 0.0
        backend.on_run_created(self._queue.put)

    @contextmanager
    def paused(self, after_items: int = 0) -> Iterator[None]:
        """Holds runs at an item boundary once ``after_items`` more items were evaluated.

        Lets tests observe a run mid-way (cancel it, time out a wait) deterministically.
        """
        with self._gate:
            self._budget = after_items
        try:
            yield
        finally:
            with self._gate:
                self._budget = None
                self._gate.notify_all()

    def wait_until_held(self, timeout: float = 10.0) -> bool:
        """True once the executor is holding at an item boundary (see ``paused``)."""
        with self._gate:
            return self._gate.wait_for(lambda: self._blocked, timeout)

    def _pass_gate(self) -> None:
        with self._gate:
            while self._budget is not None and self._budget <= 0 and not self._stopping:
                self._blocked = True
                self._gate.notify_all()
                self._gate.wait()
            self._blocked = False
            if self._stopping:
                raise _StoppingError
            if self._budget is not None:
                self._budget -= 1

    def start(self) -> None:
        self._next_rescan = time.monotonic() + LEASE_STALE_AFTER
        self._thread = threading.Thread(target=self._loop, name="platform-eval-runs", daemon=True)
        self._thread.start()
        self._heartbeat_stop.clear()
        self._heartbeat = threading.Thread(
            target=self._beat, name="platform-eval-run-leases", daemon=True
        )
        self._heartbeat.start()
        # Runs left unfinished by an earlier process on the same database resume.
        self._queue_unfinished()

    def _queue_unfinished(self) -> None:
        """Every unfinished run of the database not being executed here: one whose executor
        died (its lease went stale) is taken over; one a live executor holds is left to it."""
        for _parent, body in self._backend.store.scan(RUNS):
            run = EvaluationRun.from_wire(body)
            if not run.done and run.name and run.name not in self._held:
                self._queue.put(run.name)

    def stop(self) -> None:
        if self._thread is not None:
            with self._gate:
                self._stopping = True
                self._gate.notify_all()
            if self.judges.model is not None:
                # Calls under way would hold the stop for as long as a model takes to answer.
                self.judges.model.cancel()
            self._queue.put(None)
            self._thread.join(timeout=30)
            self._thread = None
            self._stopping = False
        if self._heartbeat is not None:
            self._heartbeat_stop.set()
            self._heartbeat.join(timeout=10)
            self._heartbeat = None
        # Stopped on purpose: the runs it held are free at once for the next executor.
        for name in list(self._held):
            self._release(name)

    def health(self) -> dict[str, Any]:
        """The executor's state for the health check: ``running``; ``degraded`` while a run's
        failure could not be recorded yet (the database refuses writes: a full disk), with the
        error and those runs; ``stopped`` when no thread executes runs."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return {"state": "stopped"}
        with self._gate:
            unrecorded = sorted(self._unrecorded)
            error = self._store_error
        if not unrecorded and error is None:
            return {"state": "running"}
        return {"state": "degraded", "error": error, "unrecordedRuns": unrecorded}

    def _loop(self) -> None:
        while True:
            try:
                # Wake up now and then to record a failure the database refused, or to try a
                # run another executor held again.
                name = self._queue.get(timeout=self._wake_after())
            except queue.Empty:
                self._record_failures()
                self._retry_deferred()
                continue
            if name is None:
                return
            self._record_failures()
            try:
                self.execute(name)
            except _StoppingError:
                return
            except _LeaseLostError:
                _logger.warning("run %s was taken over by another executor", name)
            except Exception as exc:
                # Whatever one run meets (a full disk, a database error, a metric that raises),
                # that run FAILS with the reason and the executor goes on with the next.
                _logger.exception("run %s failed unexpectedly", name)
                self._fail(name, _reason(exc))

    def _wake_after(self) -> float:
        waits = [max(0.0, self._next_rescan - time.monotonic())]
        if self._unrecorded:
            waits.append(RECORD_RETRY_INTERVAL)
        if self._deferred:
            waits.append(max(0.0, min(self._deferred.values()) - time.monotonic()))
        return min(waits)

    def _retry_deferred(self) -> None:
        now = time.monotonic()
        if now >= self._next_rescan:
            # Another process on this database may have died with runs under way.
            self._next_rescan = now + LEASE_STALE_AFTER
            self._deferred.clear()
            self._queue_unfinished()
            return
        for name, when in list(self._deferred.items()):
            if when <= now:
                del self._deferred[name]
                self._queue.put(name)

    def _beat(self) -> None:
        """Renews the leases of the runs being executed, notes the ones lost, and picks up the
        cancels other processes on the database recorded."""
        while not self._heartbeat_stop.wait(HEARTBEAT_INTERVAL):
            held = list(self._held)
            if not held:
                continue
            try:
                self._lost |= self._backend.store.renew_leases(self.owner, held)
                for name in held:
                    if self._backend.store.is_cancel_requested(name):
                        self._backend.cancel_requested.add(name)
                        self._cancel_judging(name)
            except Exception:  # a full disk: the next beat tries again
                _logger.warning("run leases could not be renewed", exc_info=True)

    def _claim(self, name: str) -> bool:
        if self._backend.store.claim_run(name, self.owner, LEASE_STALE_AFTER):
            self._held.add(name)
            self._lost.discard(name)
            return True
        # Another live executor runs it; if that one dies, its lease goes stale.
        self._deferred[name] = time.monotonic() + LEASE_STALE_AFTER / 2
        return False

    def _release(self, name: str) -> None:
        self._held.discard(name)
        try:
            self._backend.store.release_run(name, self.owner)
        except Exception:  # it goes stale then
            _logger.warning("the lease of run %s could not be released", name, exc_info=True)

    def _fail(self, name: str, reason: str) -> None:
        try:
            self._finish(name, EvaluationRunState.FAILED, error=reason)
        except Exception as exc:
            # Recording the failure needs a write too: kept until the database takes it.
            with self._gate:
                self._unrecorded[name] = reason
                self._store_error = _reason(exc)
            _logger.warning("run %s: its failure cannot be recorded yet: %s", name, exc)
        else:
            with self._gate:
                self._store_error = None

    def _record_failures(self) -> None:
        with self._gate:
            pending = dict(self._unrecorded)
            self._unrecorded.clear()
        for name, reason in pending.items():
            self._fail(name, reason)

        # -- one run --------------------------------------------------------------------------

    def execute(self, name: str) -> None:
        run = self._backend.get_run_if_any(name)
        if run is None or run.done or not self._claim(name):
            return
        try:
            self._execute(name)
        finally:
            self._release(name)
            if isinstance(self.judges.model, Judging):
                self.judges.model.end_evaluation(name)

    def _execute(self, name: str) -> None:
        run = self._transition(name, EvaluationRunState.RUNNING)
        if run is None:
            return
        parent, _ = split_name(name, RUNS)
        data_source = run.data_source or EvaluationRunDataSource()
        frozen: dict[str, dict[str, Any]] = {}
        try:
            configured = run.evaluation_config.metrics if run.evaluation_config else None
            # A registered metric deleted since the run was created fails the run here.
            specs = self._backend.resolve_metrics(parent, configured or [])
            if data_source.evaluation_set_revision:
                # The item revisions it froze: later changes to the set or items do not count.
                items = self._revisions.frozen_items(data_source.evaluation_set_revision)
            elif (kept := self._backend.frozen_run_input(name)) is not None:
                # The set's items as they were when the run was created.
                items = list(kept.get(RUN_INPUT_ITEMS) or [])
                frozen = kept.get(RUN_INPUT_BODIES) or {}
            else:
                source = self._backend.get_by_name(data_source.evaluation_set or "", SETS)
                items = list(EvaluationSet.from_wire(source).evaluation_items or [])
        except ApiError as exc:
            self._finish(name, EvaluationRunState.FAILED, error=exc.message)
            return

        output_prefix = run.output_uri_prefix
        # Results written before a restart of the emulator are kept, not computed again.
        earlier = self._earlier_results(parent, name)
        result_names: list[str] = []
        scores: dict[tuple[str | None, str], list[float]] = defaultdict(list)
        failed = 0
        total = 0
        last_report = 0.0
        step = max(1, len(items) // 100)

        loss_configs = run.evaluation_config.loss_analysis_config if run.evaluation_config else None

        def evaluate(item_name: str) -> _Scored:
            return self._evaluate_item(
                parent,
                name,
                item_name,
                specs,
                output_prefix,
                frozen.get(item_name),
                keep_request=bool(loss_configs),
            )

        # Kept only for a run that asks for loss analysis: its failures are clustered at the end.
        analysed: list[loss_analysis.Source] = []
        try:
            for result in self._in_order(name, items, earlier, evaluate):
                total += 1
                result_names.append(result.name)
                response = result.response
                _tally(response, scores)
                if loss_configs and response is not None:
                    analysed.append((result.name, response))
                failed += 1 if result.failed else 0
                if total % step == 0 or time.monotonic() - last_report > PROGRESS_INTERVAL:
                    last_report = time.monotonic()
                    self._report_progress(name, total, len(items))
            state = EvaluationRunState.SUCCEEDED
        except _CancelledError:
            state = EvaluationRunState.CANCELLED
            # Results written before a restart stay with the cancelled run.
            result_names += [r.name for kept in earlier.values() for r in kept]
        if self._backend.store.get(parent, RUNS, split_name(name, RUNS)[1]) is None:
            # Deleted while running: its partial results go with it.
            self._discard(parent, result_names)
            self._backend.cancel_handled(name)
            return
        self._report_progress(name, total, len(items))

        result_set = EvaluationSet(
            # The service's name for it (the replay test of get_evaluation_set).
            display_name=f"Results Set for EvaluationRun {run.id}",
            evaluation_items=result_names,
        )
        # Written by the service itself, as it is: a run cancelled early has no results yet.
        stored_set = self._backend.write(parent, SETS, result_set.to_wire())
        results = EvaluationRunResults(evaluation_set=stored_set["name"])
        error: str | None = None
        error_code = "INTERNAL"
        if state == EvaluationRunState.SUCCEEDED and not scores:
            # As the service: FAILED, and the results set (with each item's error) but no
            # summary.
            state, error = EvaluationRunState.FAILED, NOTHING_TO_AGGREGATE
            error_code = "FAILED_PRECONDITION"
        else:
            # As recorded: no failedItems at 0 (proto3 JSON leaves a zero out).
            results.summary_metrics = SummaryMetrics(
                metrics=summarize(scores), total_items=total, failed_items=failed or None
            )
        if loss_configs and state == EvaluationRunState.SUCCEEDED:
            try:
                with evaluation(name):
                    found = loss_analysis.analyse(self.judges, loss_configs, analysed)
                results.loss_analysis_results = [LossAnalysisResult.from_wire(r) for r in found]
            except metrics.MetricError as exc:
                # Scored, but not analysed as asked: the run says why rather than ending
                # SUCCEEDED without the analysis.
                state, error = EvaluationRunState.FAILED, f"loss analysis: {exc}"
        self._record_judge_usage(name)
        self._finish(name, state, results=results, error=error, error_code=error_code)

    def _record_judge_usage(self, name: str) -> None:
        """What judging the run cost, kept with it for `results` to show later."""
        report = usage_report(self.judges, name)
        if report is not None:
            self._backend.store.set_judge_usage(name, report)

    def _workers(self) -> int:
        """Items evaluated at once at most: a model judge's concurrency (its calls wait on the
        network, so items overlap); else one, in order."""
        model = self.judges.model
        return max(1, model.in_flight_cap) if model is not None else 1

    def _window(self) -> int:
        """Items evaluated at once now: as many as the judge takes calls at once, and a few
        more being prepared (with an adaptive judge, where its limit stands: more threads than
        calls would only contend for the interpreter)."""
        model = self.judges.model
        if model is None:
            return 1
        return max(1, min(model.in_flight_cap, model.calls_at_once + WINDOW_MARGIN))

    def _in_order(
        self,
        run_name: str,
        items: Sequence[str],
        earlier: dict[str, list[_Scored]],
        evaluate: Callable[[str], _Scored],
    ) -> Iterator[_Scored]:
        """Each item's result, in the items' order; with several workers, up to that many items
        are evaluated at once. A cancel (or a stop) is noticed before each item is started; the
        items already under way finish and are yielded before it is raised."""
        workers = self._workers()
        window: deque[Future[_Scored]] = deque()
        with ThreadPoolExecutor(workers, thread_name_prefix="platform-eval-item") as pool:
            try:
                for item_name in items:
                    self._pass_gate()
                    self._check_not_cancelled(run_name)
                    reused = earlier.get(item_name)
                    if reused:
                        window.append(_done(reused.pop(0)))
                    elif workers == 1:
                        window.append(_done(evaluate(item_name)))
                    else:
                        window.append(pool.submit(evaluate, item_name))
                    while len(window) >= self._window() or (window and window[0].done()):
                        yield window.popleft().result()
            except (_CancelledError, _StoppingError):
                while window:
                    yield window.popleft().result()
                raise
            while window:
                yield window.popleft().result()

    def _discard(self, parent: str, result_names: list[str]) -> None:
        for result_name in result_names:
            self._backend.store.delete(parent, ITEMS, split_name(result_name, ITEMS)[1])

    def _stored_item(self, name: str, frozen: dict[str, Any] | None = None) -> dict[str, Any]:
        """An item's JSON by its name (as it was frozen for the run, when it was), or the copy
        an item revision holds by the revision's name."""
        if frozen is not None:
            return frozen
        if f"/{REVISIONS}/" in name:
            return self._revisions.frozen_item(name)
        return self._backend.get_by_name(name, ITEMS)

    def _request_of(
        self, item_name: str, frozen: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any] | None, str | None, str, dict[str, Any]]:
        """The request of a REQUEST item as checked JSON: inline, as the store keeps it
        (checked when the item was written), or read from its gs:// object and checked here;
        the error when there is none; the eval case it records (for a judge's accounting and
        errors); and the item's metadata (the case's initial and final session state)."""
        try:
            item = self._stored_item(item_name, frozen)
        except ApiError as exc:
            return None, exc.message, "", {}
        metadata = item.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        case = str(
            metadata.get("evalCaseId") or item.get(_ITEM_NAME) or item_name.rsplit("/", 1)[-1]
        )
        if item.get(_ITEM_TYPE) != EvaluationItemType.REQUEST.value:
            return None, f"{item_name} is not a REQUEST item", case, metadata
        if item.get(_ITEM_REQUEST) is not None:
            return item[_ITEM_REQUEST], None, case, metadata
        if gcs_uri := item.get(_ITEM_GCS_URI):
            try:
                request = EvaluationRequest.from_wire(
                    self._objects.read_json(gcs_uri, project_of(item_name))
                )
            except ApiError as exc:
                return None, f"cannot read {gcs_uri}: {exc.message}", case, metadata
            problem = request_mode_problem(request)
            if problem:
                return None, f"{gcs_uri}: {problem}", case, metadata
            return request.to_wire(), None, case, metadata
        return None, f"{item_name} has no evaluationRequest", case, metadata

    def _evaluate_item(
        self,
        parent: str,
        run_name: str,
        item_name: str,
        specs: list[metrics.MetricSpec],
        output_prefix: str | None,
        frozen: dict[str, Any] | None = None,
        *,
        keep_request: bool = False,
    ) -> _Scored:
        # An item revision's name (a run on a set revision) is reported beside its item's.
        request_name, is_revision, _ = item_name.partition(f"/{REVISIONS}/")
        response = EvaluationResult(
            evaluation_request=request_name,
            evaluation_request_revision=item_name if is_revision else None,
            evaluation_run=run_name,
        )
        request, error, case, metadata = self._request_of(item_name, frozen)
        if request is not None:
            # Its judge calls belong to the run: a cancel of the run ends them at once.
            with evaluation(run_name):
                candidate_results = metrics.evaluate_stored_request(
                    specs, request, self.judges, case=case, metadata=metadata
                )
            if self.judges.model is not None:
                # Judging cut short by a stop or a cancel is not kept half judged: a stopped
                # run resumes on the next start and evaluates this item again then.
                if self._stopping:
                    raise _StoppingError
                self._check_not_cancelled(run_name)
            response.metric = specs[0].name if len(specs) == 1 else None
            response.candidate_results = candidate_results
            if not candidate_results:
                error = "the request has no candidate responses to evaluate"
            elif any(
                r.score is None and not metrics.not_applicable(r.explanation)
                for r in candidate_results
            ):
                error = "some candidates could not be evaluated; see candidateResults"
        result = EvaluationItem(
            # As the service names it: by the run's first metric, however many it has (one
            # RESULT item a request: googleapis/python-aiplatform's replay of a 19-item run
            # of two metrics, "universal result for 7119522507803066368", 19 results).
            display_name=f"{specs[0].name} result for {request_name.rsplit('/', 1)[-1]}",
            evaluation_item_type=EvaluationItemType.RESULT,
            error=rpc_status("INVALID_ARGUMENT", error) if error else None,
        )
        response_json = response.to_wire()
        if request is not None:
            # The result copies the request as the store keeps it: no model is built for it,
            # unless loss analysis reads it.
            response_json[_RESULT_REQUEST] = request
            if keep_request:
                response.request = EvaluationRequest.from_wire(request)
        result_id = new_id()
        if output_prefix:
            # As the service does with an output destination: the payload goes to Cloud Storage
            # as ``result_<RESULT item id>.json`` (the same replay), and the item keeps where it
            # came from for filters and resumption.
            result.gcs_uri = f"{output_prefix.rstrip('/')}/result_{result_id}.json"
            self._objects.write_json(result.gcs_uri, response_json, project_of(parent))
        result_json = result.to_wire()
        if not output_prefix:
            result_json[_ITEM_RESPONSE] = response_json
        stored = self._backend.create_result_item(parent, result_json, run=run_name, rid=result_id)
        return _Scored(str(stored["name"]), response, bool(error))

    def _response_of(self, result: EvaluationItem) -> EvaluationResult | None:
        if result.evaluation_response is not None or not result.gcs_uri:
            return result.evaluation_response
        try:
            return EvaluationResult.from_wire(
                self._objects.read_json(result.gcs_uri, project_of(str(result.name)))
            )
        except (ApiError, ValidationError):
            return None

    def _earlier_results(self, parent: str, run_name: str) -> dict[str, list[_Scored]]:
        found: dict[str, list[_Scored]] = defaultdict(list)
        token: str | None = None
        while True:
            page = json.loads(
                self._backend.list_json(
                    parent,
                    ITEMS,
                    filter=f'evaluation_run = "{run_name}" AND evaluation_item_type = RESULT',
                    page_size=1000,
                    page_token=token,
                )
            )
            for body in page[ITEMS]:
                result = EvaluationItem.from_wire(body)
                response = self._response_of(result)
                evaluated = response and (
                    response.evaluation_request_revision or response.evaluation_request
                )
                if evaluated:
                    found[evaluated].append(
                        _Scored(str(result.name), response, result.error is not None)
                    )
            token = page.get("nextPageToken")
            if not token:
                return found

    def _report_progress(self, name: str, done: int, total: int) -> None:
        # Not in the run: the API has no field for it (GET /_emulator/progress/<run> serves it).
        self._backend.store.set_progress(name, done, total)

    # -- state ----------------------------------------------------------------------------

    def _cancel_judging(self, name: str) -> None:
        """A run asked to stop: its judge calls under way end now, not when they answer."""
        if self.judges.model is not None:
            self.judges.model.cancel(name)

    def _check_not_cancelled(self, name: str) -> None:
        # A run being executed is cancelled (or deleted, which cancels it first) through
        # cancel_requested: no need to read the stored run before every item.
        if name in self._lost:
            raise _LeaseLostError
        if name in self._backend.cancel_requested:
            raise _CancelledError

    def _transition(self, name: str, state: EvaluationRunState) -> EvaluationRun | None:
        def move(run: EvaluationRun) -> bool:
            if run.done:
                return False
            run.state = state
            return True

        run = self._backend.update_run(name, move)
        if run is None or run.state != state:
            return None
        return run

    def _finish(
        self,
        name: str,
        state: EvaluationRunState,
        *,
        results: EvaluationRunResults | None = None,
        error: str | None = None,
        error_code: str = "INTERNAL",
    ) -> None:

        def finish(run: EvaluationRun) -> bool:
            if run.done:
                return False
            if results is not None:
                run.evaluation_results = results
                # The service names the results set here once the run is done (a set
                # revision's run: the revision, as no recording shows otherwise).
                revision = run.data_source.evaluation_set_revision if run.data_source else None
                run.evaluation_set_snapshot = revision or results.evaluation_set
            run.state = state
            run.completion_time = now()
            if error:
                run.error = rpc_status(error_code, error)
            elif state == EvaluationRunState.CANCELLED:
                run.error = cancelled_status()
            return True

        self._backend.update_run(name, finish)
        try:
            self._backend.drop_run_input(name)
        except sqlite3.Error:  # a full disk: the copy stays with the run, and harms nothing
            _logger.debug("the input kept for run %s stays", name, exc_info=True)
        self._backend.cancel_handled(name)
