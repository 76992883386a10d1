"""The emulator's resource logic, independent of HTTP: validation, ids, paging, runs' state.

Methods take a parent (``projects/{p}/locations/{l}``), so projects and locations are isolated
by construction. Errors are ``ApiError`` with the google.rpc status the real service would use.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import logging
import re
import secrets
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic.alias_generators import to_camel, to_snake

from .. import metrics
from .._names import EXPERIMENTS, ITEMS, METRICS, REVISIONS, RUNS, SETS
from ..errors import RPC_CODES
from ..metrics import service_only
from ..types import (
    EvaluationExperiment,
    EvaluationItem,
    EvaluationItemType,
    EvaluationMetric,
    EvaluationRun,
    EvaluationRunMetric,
    EvaluationRunState,
    EvaluationSet,
    Operation,
    Status,
    WireModel,
)
from ..types._base import clear_output_only, rfc3339, wire_name
from ..types.runs import NO_COMPLETION_TIME
from .filters import FilterError, compile_filter, compile_order
from .required import missing
from .store import Store
from .versions import v1beta1_only

_logger = logging.getLogger("platform_eval.emulator")

M = TypeVar("M", bound=WireModel)

COLLECTIONS = (ITEMS, SETS, RUNS, EXPERIMENTS, METRICS)
#: Each resource's long-running operations are kept under its name, as the service names them
#: (and its revisions, ``REVISIONS``, too).
OPERATIONS = "operations"
#: The annotation of a run that keeps the items it was started on: their names in order, and
#: each item as it was.
RUN_INPUT = "input"
RUN_INPUT_ITEMS = "names"
RUN_INPUT_BODIES = "items"
_SET_ITEMS = wire_name(EvaluationSet, "evaluation_items")
_EMPTY = "type.googleapis.com/google.protobuf.Empty"
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
#: Collections whose resources have an ``updateTime``.
_UPDATABLE = frozenset({SETS, EXPERIMENTS, METRICS})
_SET_MUTABLE = ("display_name", "evaluation_items", "metadata")
_EXPERIMENT_MUTABLE = ("display_name", "evaluation_runs", "labels", "metadata", "merge_strategy")

_HTTP_FOR_STATUS = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "INTERNAL": 500,
    "UNIMPLEMENTED": 501,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}


#: evaluationMetricId, as the discovery document describes it.
_METRIC_ID = re.compile(r"[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?")

#: The service's domain in ErrorInfo (AIP-193).
ERROR_DOMAIN = "aiplatform.googleapis.com"


class ApiError(Exception):
    """A google.rpc error; ``violations`` are (field path, description) of a bad request."""

    def __init__(
        self, status: str, message: str, violations: list[tuple[str, str]] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.violations = violations or []

    @property
    def http_status(self) -> int:
        return _HTTP_FOR_STATUS.get(self.status, 500)

    def body(self) -> dict[str, Any]:
        # AIP-193: every error carries an ErrorInfo; a bad request names its fields.
        details: list[dict[str, Any]] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": self.status,
                "domain": ERROR_DOMAIN,
            }
        ]
        if self.violations:
            details.append(
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [
                        {"field": field, "description": description}
                        for field, description in self.violations
                    ],
                }
            )
        return {
            "error": {
                "code": self.http_status,
                "message": self.message,
                "status": self.status,
                "details": details,
            }
        }


def now() -> datetime:
    return datetime.now(UTC)


def now_rfc3339() -> str:
    return rfc3339(now())


def new_id() -> str:
    # Numeric like the service's ids; 18 digits keep them unique without coordination.
    return str(10**17 + secrets.randbelow(9 * 10**17))


def _field_path(loc: tuple[int | str, ...]) -> str:
    # google.rpc.BadRequest's spelling: dotted fields, list positions in brackets.
    path = ""
    for step in loc:
        path += f"[{step}]" if isinstance(step, int) else f".{step}" if path else str(step)
    return path or "(root)"


def _violations(error: ValidationError) -> list[tuple[str, str]]:
    """(field path, description) of each problem pydantic found."""
    return [
        (_field_path(err["loc"]), err["msg"].removeprefix("Value error, "))
        for err in error.errors()
    ]


def _describe(error: ValidationError) -> str:
    return "; ".join(f"{where}: {message}" for where, message in _violations(error))


def parse_body(
    model: type[M],
    body: Any,
    version: str = "v1beta1",
    *,
    complete: bool = True,
    required: bool = True,
) -> M:
    """A request body as ``model``: INVALID_ARGUMENT naming each bad field otherwise, a
    required field left out (``complete=False``: a patch, which sets only some of the
    resource's own fields), and on ``v1`` a field only v1beta1 has.

    Output-only fields it sets are ignored (AIP-203): a resource read and sent back as it was
    is accepted, and what only the service writes stays the service's. ``required=False``
    checks no required field (a request that carries results as a client holds them).
    """
    return _parse_body(model, body, version, complete, required)[0]


#: The wire name of a RESULT item's payload, which only runs write.
_RESPONSE_FIELD = wire_name(EvaluationItem, "evaluation_response")


def _parse_body(
    model: type[M], body: Any, version: str, complete: bool = True, required: bool = True
) -> tuple[M, list[str]]:
    """``parse_body``, and the JSON paths of the output-only fields it ignored."""
    what = model.__name__
    if not isinstance(body, dict):
        raise ApiError("INVALID_ARGUMENT", f"the request body must be a JSON object ({what})")
    try:
        parsed = model.model_validate(body)
    except ValidationError as error:
        raise ApiError(
            "INVALID_ARGUMENT", f"invalid {what}: {_describe(error)}", _violations(error)
        ) from None
    if version == "v1" and (found := next(v1beta1_only(parsed), None)) is not None:
        raise ApiError("INVALID_ARGUMENT", f"{found}: not a field of the v1 API (v1beta1 has it)")
    ignored = clear_output_only(parsed)
    if ignored:
        _logger.debug("ignoring output-only fields of a %s request: %s", what, ignored)
    if required:
        refuse_missing(parsed, top=complete)
    return parsed, ignored


def _id_under(parent: str, name: str, collection: str, where: str, what: str) -> str:
    """The id of ``name``, a resource of ``collection`` under ``parent``: INVALID_ARGUMENT
    naming ``where`` when it is not ``what``'s name, or is another project's or location's."""
    try:
        under, rid = split_name(name, collection)
    except ApiError:
        raise ApiError("INVALID_ARGUMENT", f"{where}: {name!r} is not {what}'s name") from None
    if under != parent:
        raise ApiError(
            "INVALID_ARGUMENT", f"{where}: {name!r} belongs to another project or location"
        )
    return rid


def refuse_missing(resource: WireModel, *, top: bool = True) -> None:
    """INVALID_ARGUMENT naming the first required field ``resource`` leaves out."""
    where = next(missing(resource, top=top), None)
    if where is not None:
        raise ApiError("INVALID_ARGUMENT", f"{where} is required", [(where, "required")])


def project_of(name: str) -> str:
    """The project of a parent or resource name (``projects/{project}/...``)."""
    return name.split("/", 2)[1]


def split_name(name: str, collection: str) -> tuple[str, str]:
    """(parent, id) of a full resource name of ``collection``."""
    parts = name.split("/")
    if (
        len(parts) != 6
        or parts[0] != "projects"
        or parts[2] != "locations"
        or parts[4] != collection
    ):
        raise ApiError("INVALID_ARGUMENT", f"{name!r} is not a resource name of {collection}")
    return "/".join(parts[:4]), parts[5]


def split_revision_name(name: str, collection: str) -> tuple[str, str]:
    """(owner, revision id) of ``projects/p/locations/l/{collection}/{id}/revisions/{rid}``."""
    owner, sep, rid = name.rpartition(f"/{REVISIONS}/")
    if not sep or not rid or "/" in rid:
        raise ApiError("INVALID_ARGUMENT", f"{name!r} is not a revision name of {collection}")
    split_name(owner, collection)
    return owner, rid


def type_url(version: str, message: str) -> str:
    """The ``@type`` of an aiplatform message in an Operation's metadata or response."""
    return f"type.googleapis.com/google.cloud.aiplatform.{version}.{message}"


def operation_body(
    owner: str,
    *,
    metadata: str,
    response: dict[str, Any] | None = None,
    error: Status | None = None,
) -> tuple[str, dict[str, Any]]:
    """(id, body) of a finished operation of ``owner``."""
    rid = new_id()
    stamp = now_rfc3339()
    generic = {"createTime": stamp, "updateTime": stamp}
    if metadata.endswith(".GenericOperationMetadata"):
        meta: dict[str, Any] = {"@type": metadata, **generic}
    else:
        meta = {"@type": metadata, "genericMetadata": generic}
    body: dict[str, Any] = {"name": f"{owner}/{OPERATIONS}/{rid}", "metadata": meta, "done": True}
    if error is not None:
        body["error"] = error.to_wire()
    else:
        body["response"] = response or {"@type": _EMPTY}
    return rid, body


def rpc_status(status: str, message: str) -> Status:
    """A google.rpc.Status by its status name (``INVALID_ARGUMENT``), with its code."""
    return Status(code=RPC_CODES[status], message=message)


def cancelled_status() -> Status:
    """The ``error`` of a cancelled run (google.rpc CANCELLED), as the service reports it."""
    return rpc_status("CANCELLED", "the run was cancelled")


class Backend:
    def __init__(
        self, store: Store, *, why_not_computable: Callable[[Any], str | None] | None = None
    ) -> None:
        self.store = store
        #: Why the executor's judges cannot compute a metric (a judged metric with no judge
        #: model, a code metric without --allow-code-metrics), or None: a run naming one is
        #: refused when it is created, whoever creates it, not failed case by case.
        self.why_not_computable = why_not_computable
        #: Whether the executor has a model judge: loss analysis clusters with it.
        self.has_judge_model = True
        self._run_listeners: list[Callable[[str], None]] = []
        self._run_lock = threading.Lock()
        self._experiment_lock = threading.Lock()
        self._cancel_listeners: list[Callable[[str], None]] = []
        # Runs being executed that were asked to stop: they turn CANCELLED when the executor
        # stops at the next item boundary, together with the results written so far. Kept in
        # the store too, so that an accepted cancel survives a restart of the emulator.
        self.cancel_requested: set[str] = store.cancel_requests()

    def request_cancel(self, name: str) -> None:
        self.store.add_cancel_request(name)
        self.cancel_requested.add(name)
        for listener in self._cancel_listeners:
            listener(name)

    def on_cancel_requested(self, listener: Callable[[str], None]) -> None:
        self._cancel_listeners.append(listener)

    def cancel_handled(self, name: str) -> None:
        self.cancel_requested.discard(name)
        self.store.drop_cancel_request(name)

    def on_run_created(self, listener: Callable[[str], None]) -> None:
        self._run_listeners.append(listener)

    # -- generic --------------------------------------------------------------------------

    def _get(self, parent: str, collection: str, rid: str) -> dict[str, Any]:
        body = self.store.get(parent, collection, rid)
        if body is None:
            raise ApiError("NOT_FOUND", f"{parent}/{collection}/{rid} not found")
        return body

    def get(self, parent: str, collection: str, rid: str) -> dict[str, Any]:
        return self._get(parent, collection, rid)

    def get_json(self, parent: str, collection: str, rid: str) -> str:
        """``get`` as the stored JSON text, for answering a GET without decoding it."""
        text = self.store.get_text(parent, collection, rid)
        if text is None:
            raise ApiError("NOT_FOUND", f"{parent}/{collection}/{rid} not found")
        return text

    def get_by_name(self, name: str, collection: str) -> dict[str, Any]:
        parent, rid = split_name(name, collection)
        return self._get(parent, collection, rid)

    def _insert(
        self,
        parent: str,
        collection: str,
        body: dict[str, Any],
        request_id: str | None,
        annotations: dict[str, Any] | None = None,
        rid: str | None = None,
    ) -> dict[str, Any]:
        rid = rid or new_id()
        # Server-assigned fields win over whatever the caller sent for them.
        body = {**body, "name": f"{parent}/{collection}/{rid}", "createTime": now_rfc3339()}
        if collection in _UPDATABLE:
            body["updateTime"] = body["createTime"]
        stored, _created = self.store.insert(parent, collection, rid, body, request_id, annotations)
        return stored

    def delete(self, parent: str, collection: str, rid: str, version: str) -> dict[str, Any]:
        """Deletes a resource; answers with the (finished) long-running operation."""
        if collection == RUNS:
            self.cancel_run(parent, rid, quiet=True)
        if not self.store.delete(parent, collection, rid):
            raise ApiError("NOT_FOUND", f"{parent}/{collection}/{rid} not found")
        # v1's discovery document has no per-resource operations: its clients poll
        # projects.locations.operations, so the operation is named under the location.
        return self.finished_operation(
            f"{parent}/{collection}/{rid}",
            metadata=type_url(version, "DeleteOperationMetadata"),
            named_under=parent if version == "v1" else None,
        )

    # -- long-running operations ----------------------------------------------------------

    def finished_operation(
        self,
        owner: str,
        *,
        metadata: str,
        response: dict[str, Any] | None = None,
        error: Status | None = None,
        named_under: str | None = None,
    ) -> dict[str, Any]:
        """Records an operation of ``owner`` that is already done (the emulator does the work
        before answering) and returns it. ``metadata`` is the metadata message's ``@type``;
        ``named_under``: the location its name is under, where the API version names
        operations by location (v1), not by resource."""
        rid, body = operation_body(owner, metadata=metadata, response=response, error=error)
        if named_under is not None:
            body["name"] = f"{named_under}/{OPERATIONS}/{rid}"
        self.store.insert(owner, OPERATIONS, rid, body, None, None)
        return body

    def get_operation(self, owner: str, rid: str) -> dict[str, Any]:
        return self._get(owner, OPERATIONS, rid)

    def delete_operation(self, owner: str, rid: str) -> None:
        if not self.store.delete(owner, OPERATIONS, rid):
            raise ApiError("NOT_FOUND", f"{owner}/{OPERATIONS}/{rid} not found")

    def list_json(
        self,
        parent: str,
        collection: str,
        *,
        filter: str | None,
        page_size: int | None,
        page_token: str | None,
        order_by: str | None = None,
        newest_first: bool = False,
        key: str | None = None,
    ) -> str:
        """A page of ``collection`` (in creation order, in ``order_by``'s, or newest first) as
        the response's JSON, made of the resources' stored text: a list answers with it as it
        is. The resources come under ``key`` (the collection's name by default)."""
        if page_size is not None and page_size < 0:
            raise ApiError("INVALID_ARGUMENT", "pageSize must not be negative")
        size = min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        known = _filterable(collection)
        try:
            where, args = compile_filter(filter, known)
        except FilterError as exc:
            raise ApiError("INVALID_ARGUMENT", f"invalid filter: {exc}") from None
        try:
            order, order_args = compile_order(order_by, known)
        except FilterError as exc:
            raise ApiError("INVALID_ARGUMENT", f"invalid orderBy: {exc}") from None
        if newest_first and not order:
            order = "seq DESC"
        binding = hashlib.sha256(
            f"{parent}|{collection}|{filter or ''}|{order_by or ''}".encode()
        ).hexdigest()[:16]
        position = _read_page_token(page_token, binding)
        # Creation order pages after the last row's seq; any other order pages by position
        # (creation order breaking its ties).
        rows = self.store.page(
            parent,
            collection,
            where,
            args,
            limit=size + 1,
            after_seq=0 if order else position,
            order=order,
            order_args=order_args,
            offset=position if order else 0,
        )
        kept = rows[:size]
        texts = ",".join(_as_listed(text) if collection == RUNS else text for _, text in kept)
        tail = ""
        if len(rows) > size:
            following = position + size if order else rows[size - 1][0]
            tail = f',"nextPageToken":{json.dumps(_page_token(following, binding))}'
        return f"{{{json.dumps(key or collection)}:[{texts}]{tail}}}"

    # -- evaluationItems ------------------------------------------------------------------

    def create(
        self,
        parent: str,
        collection: str,
        body: Any,
        request_id: str | None = None,
        *,
        version: str = "v1beta1",
        resource_id: str | None = None,
    ) -> dict[str, Any]:
        """Creates a resource of ``collection`` from a request's body (``resource_id``: the id
        a metric's create chose, ``evaluationMetricId``).

        A create that repeats the request id of an earlier one answers what that one created,
        without checking or creating anything again (AIP-155): a client retrying a create whose
        answer it lost gets the resource, never a second one or an error the first did not get.
        """
        if request_id and (earlier := self.store.by_request_id(parent, collection, request_id)):
            return _as_created(collection, earlier)
        if collection == METRICS:
            return self._create_metric(parent, body, request_id, version, resource_id)
        creators = {
            ITEMS: self._create_item,
            SETS: self._create_set,
            RUNS: self._create_run,
            EXPERIMENTS: self._create_experiment,
        }
        if collection not in creators:
            raise ApiError("NOT_FOUND", f"{collection} cannot be created")
        return _as_created(collection, creators[collection](parent, body, request_id, version))

    def write(self, parent: str, collection: str, resource: dict[str, Any]) -> dict[str, Any]:
        """Stores a resource the emulator makes itself (a run's result set): not a request, so
        none of a request's checks apply."""
        return self._insert(parent, collection, resource, None)

    def _create_item(
        self, parent: str, body: Any, request_id: str | None, version: str
    ) -> dict[str, Any]:
        return self._insert(parent, ITEMS, self.new_item(body, version).to_wire(), request_id)

    @staticmethod
    def new_item(body: Any, version: str) -> EvaluationItem:
        """An item as a create or an import receives it, checked as the service checks it."""
        item, ignored = _parse_body(EvaluationItem, body, version)
        if item.evaluation_item_type not in (EvaluationItemType.REQUEST, EvaluationItemType.RESULT):
            raise ApiError(
                "INVALID_ARGUMENT",
                "evaluationItemType is required and must be REQUEST or RESULT, got "
                f"{item.evaluation_item_type!r}",
            )
        if item.evaluation_request is None and not item.gcs_uri:
            if _RESPONSE_FIELD in ignored:
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"{_RESPONSE_FIELD} is output only (runs write it): a RESULT item you "
                    "create carries its payload in gcsUri",
                )
            raise ApiError(
                "INVALID_ARGUMENT", "an EvaluationItem needs a payload: evaluationRequest or gcsUri"
            )
        return item

    def create_result_item(
        self, parent: str, body: dict[str, Any], *, run: str | None = None, rid: str | None = None
    ) -> dict[str, Any]:
        """A RESULT item of ``run`` (with the id ``rid`` when its payload was written under it):
        where the item does not name its run (its payload is in Cloud Storage), the emulator
        remembers it for ``evaluation_run`` filters."""
        annotations = {"evaluationRun": run} if run else None
        return self._insert(parent, ITEMS, body, None, annotations, rid=rid)

    # -- evaluationSets -------------------------------------------------------------------

    def _check_items_exist(self, parent: str, names: list[str]) -> None:
        ids: list[str] = []
        for index, name in enumerate(names):
            ids.append(_id_under(parent, name, ITEMS, f"evaluationItems[{index}]", "an item"))
        found = self.store.get_many(parent, ITEMS, ids)
        for index, rid in enumerate(ids):
            if rid not in found:
                raise ApiError("NOT_FOUND", f"evaluationItems[{index}]: {names[index]} not found")

    def _create_set(
        self, parent: str, body: Any, request_id: str | None, version: str
    ) -> dict[str, Any]:
        evaluation_set: EvaluationSet = parse_body(EvaluationSet, body, version)
        self._check_items_exist(parent, evaluation_set.evaluation_items or [])
        return self._insert(parent, SETS, evaluation_set.to_wire(), request_id)

    def patch(
        self,
        parent: str,
        collection: str,
        rid: str,
        body: Any,
        update_mask: str | None,
        version: str = "v1beta1",
    ) -> dict[str, Any]:
        """AIP-134: the fields the mask names (``*``: every updatable one; no mask: those the
        body sets) take the body's values; a masked field the body leaves out is cleared."""
        if collection == SETS:

            def check(updated: Any) -> None:
                self._check_items_exist(parent, updated.evaluation_items or [])

            new_set = parse_body(EvaluationSet, body, version, complete=False)
            return self._patch(parent, SETS, rid, new_set, update_mask, _SET_MUTABLE, check)
        if collection == EXPERIMENTS:
            experiment = parse_body(EvaluationExperiment, body, version, complete=False)
            return self._patch(
                parent, EXPERIMENTS, rid, experiment, update_mask, _EXPERIMENT_MUTABLE
            )
        raise ApiError("NOT_FOUND", f"{collection} cannot be updated")

    def _patch(
        self,
        parent: str,
        collection: str,
        rid: str,
        patch: WireModel,
        update_mask: str | None,
        mutable: tuple[str, ...],
        check: Callable[[Any], None] | None = None,
    ) -> dict[str, Any]:
        current: Any = type(patch).from_wire(self._get(parent, collection, rid))
        paths = [f.strip() for f in (update_mask or "").split(",") if f.strip()]
        if paths == ["*"]:
            fields = list(mutable)
        else:
            fields = [to_snake(p) for p in paths] or sorted(patch.model_fields_set)
        for field in fields:
            if field not in mutable:
                updatable = sorted(to_camel(f) for f in mutable)
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"updateMask: {to_camel(field)!r} cannot be updated; updatable: {updatable}",
                )
            setattr(current, field, getattr(patch, field))
        refuse_missing(current)  # a mask can clear a required field
        if check is not None:
            check(current)
        current.update_time = now()
        updated: dict[str, Any] = current.to_wire()
        self.store.replace(parent, collection, rid, updated)
        return updated

    # -- evaluationExperiments (the official client makes one before each run) -----------

    def _create_experiment(
        self, parent: str, body: Any, request_id: str | None, version: str
    ) -> dict[str, Any]:
        experiment: EvaluationExperiment = parse_body(EvaluationExperiment, body, version)
        return self._insert(parent, EXPERIMENTS, experiment.to_wire(), request_id)

    # -- evaluationMetrics ----------------------------------------------------------------

    def _create_metric(
        self, parent: str, body: Any, request_id: str | None, version: str, metric_id: str | None
    ) -> dict[str, Any]:
        if metric_id is not None:
            if not _METRIC_ID.fullmatch(metric_id):
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"evaluationMetricId {metric_id!r}: expected 1-63 characters of a-z, 0-9 and "
                    "-, starting with a letter and ending with a letter or digit",
                )
            if self.store.get(parent, METRICS, metric_id) is not None:
                raise ApiError("ALREADY_EXISTS", f"{parent}/{METRICS}/{metric_id} already exists")
        metric: EvaluationMetric = parse_body(EvaluationMetric, body, version)
        config = metric.metric
        if config is not None and not (
            config.llm_based_metric_spec or config.custom_code_execution_spec
        ):
            raise ApiError(
                "INVALID_ARGUMENT",
                "metric: only an LLM-based metric (llmBasedMetricSpec) or a custom code "
                "execution metric (customCodeExecutionSpec) can be registered",
            )
        if config is None and not metric.gcs_uri:
            raise ApiError("INVALID_ARGUMENT", "an EvaluationMetric needs metric or gcsUri")
        try:
            return self._insert(parent, METRICS, metric.to_wire(), request_id, rid=metric_id)
        except sqlite3.IntegrityError:  # the same id, created at the same moment
            raise ApiError(
                "ALREADY_EXISTS", f"{parent}/{METRICS}/{metric_id} already exists"
            ) from None

    def registered_metric(self, name: str, where: str, parent: str | None) -> EvaluationMetric:
        """The EvaluationMetric ``name`` names, for a request's field at ``where``: refused when
        ``name`` is not a metric's name or not under ``parent`` (None: any project's), and
        NOT_FOUND when no such metric is stored."""
        metric_parent = parent or name.split(f"/{METRICS}/", 1)[0]
        rid = _id_under(metric_parent, name, METRICS, where, "an EvaluationMetric")
        body = self.store.get(metric_parent, METRICS, rid)
        if body is None:
            raise ApiError("NOT_FOUND", f"{where}: {name} not found")
        return EvaluationMetric.from_wire(body)

    def _registered(
        self, parent: str, index: int, metric: EvaluationRunMetric
    ) -> EvaluationRunMetric:
        """A run's metric that names a registered one, with that one's configuration."""
        where = f"evaluationConfig.metrics[{index}].metricResourceName"
        try:
            registered = self.registered_metric(metric.metric_resource_name or "", where, parent)
        except ApiError as error:
            # A run's configuration that names no stored metric is itself invalid.
            raise ApiError("INVALID_ARGUMENT", error.message) from None
        return metric.model_copy(
            update={
                "metric": metric.metric or registered.display_name,
                "metric_config": metric.metric_config or registered.metric,
            }
        )

    def resolve_metrics(
        self, parent: str, configured: list[EvaluationRunMetric]
    ) -> list[metrics.MetricSpec]:
        """A run's metrics as the engine computes them (registered ones looked up)."""
        specs = []
        for index, metric in enumerate(configured):
            if metric.metric_resource_name:
                metric = self._registered(parent, index, metric)
            try:
                spec = metrics.resolve(metric)
            except metrics.MetricError as exc:
                raise ApiError(
                    "INVALID_ARGUMENT", f"evaluationConfig.metrics[{index}]: {exc}"
                ) from None
            beyond = service_only.reason(spec.name)
            if beyond is not None:
                # A metric the request names rightly, that only the service computes: not the
                # request's fault (400), the emulator's limit (501), as for COMET and MetricX.
                raise ApiError(
                    "UNIMPLEMENTED",
                    f"evaluationConfig.metrics[{index}]: {beyond}: run it on the service",
                )
            why = self.why_not_computable(spec) if self.why_not_computable else None
            if why is not None:
                raise ApiError("INVALID_ARGUMENT", f"evaluationConfig.metrics[{index}]: {why}")
            specs.append(spec)
        return specs

    # -- evaluationRuns -------------------------------------------------------------------

    def _check_loss_analysis(self, run: EvaluationRun) -> None:
        """A run's lossAnalysisConfig is refused when created if it cannot be honoured."""
        configs = run.evaluation_config.loss_analysis_config if run.evaluation_config else None
        for index, config in enumerate(configs or []):
            where = f"evaluationConfig.lossAnalysisConfig[{index}]"
            if not config.metric:
                raise ApiError("INVALID_ARGUMENT", f"{where}.metric: name the metric to analyse")
            if not self.has_judge_model:
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"{where}: clustering failures needs a judge model, and none is configured "
                    "(--judge-model or PLATFORM_EVAL_JUDGE_MODEL)",
                )

    def _create_run(
        self, parent: str, body: Any, request_id: str | None, version: str
    ) -> dict[str, Any]:
        run: EvaluationRun = parse_body(EvaluationRun, body, version)
        source = self._run_source(parent, run)
        _refuse_inference(run)
        experiment = self._run_experiment(parent, run)
        configured = run.evaluation_config.metrics if run.evaluation_config else None
        if not configured:
            raise ApiError("INVALID_ARGUMENT", "evaluationConfig.metrics needs at least one metric")
        self.resolve_metrics(parent, configured)
        self._check_loss_analysis(run)
        pending = run.model_copy(
            update={
                "state": EvaluationRunState.PENDING,
                "completion_time": None,
                "error": None,
                "evaluation_results": None,
                # Named once the run has finished (``runner``), as the service does.
                "evaluation_set_snapshot": None,
                "metadata": _with_pipeline_id(run.metadata),
            }
        )
        # The set's items as they are now, kept with the run (see ``frozen_run_input``).
        frozen = None
        if not (run.data_source and run.data_source.evaluation_set_revision):
            frozen = {RUN_INPUT: self._items_now(source)}
        stored = self._insert(parent, RUNS, pending.to_wire(), request_id, frozen)
        if experiment is not None:
            self._add_to_experiment(parent, experiment, stored["name"])
        for listener in self._run_listeners:
            listener(stored["name"])
        return stored

    def _items_now(self, set_name: str) -> dict[str, Any]:
        """The set's item names and the items as they are now."""
        parent, set_id = split_name(set_name, SETS)
        names: list[str] = (self.store.get(parent, SETS, set_id) or {}).get(_SET_ITEMS) or []
        ids = [split_name(name, ITEMS)[1] for name in names]
        bodies = self.store.get_many(parent, ITEMS, ids)
        kept = {name: bodies[rid] for name, rid in zip(names, ids, strict=True) if rid in bodies}
        return {RUN_INPUT_ITEMS: names, RUN_INPUT_BODIES: kept}

    def frozen_run_input(self, run_name: str) -> dict[str, Any] | None:
        """The items a run on a set was started on: a run evaluates what it was started on,
        whatever is uploaded to the set while it waits (a set revision's run needs none: the
        revision is frozen already). Kept beside the run, never part of it; None for a run
        created before this was kept, or once it ended."""
        parent, rid = split_name(run_name, RUNS)
        found = self.store.annotation(parent, RUNS, rid, RUN_INPUT)
        return found if isinstance(found, dict) else None

    def drop_run_input(self, run_name: str) -> None:
        parent, rid = split_name(run_name, RUNS)
        self.store.drop_annotation(parent, RUNS, rid, RUN_INPUT)

    def _run_experiment(self, parent: str, run: EvaluationRun) -> str | None:
        """The id of the experiment a run names, checked to exist in ``parent``."""
        if not run.evaluation_experiment:
            return None
        field = "evaluationExperiment"
        try:
            experiment_parent, rid = split_name(run.evaluation_experiment, EXPERIMENTS)
        except ApiError:
            raise ApiError(
                "INVALID_ARGUMENT", f"{field}: not an EvaluationExperiment name"
            ) from None
        if experiment_parent != parent or self.store.get(parent, EXPERIMENTS, rid) is None:
            raise ApiError("NOT_FOUND", f"{field}: {run.evaluation_experiment} not found")
        return rid

    def _add_to_experiment(self, parent: str, rid: str, run_name: str) -> None:
        """Setting a run's experiment adds the run to it (its ``evaluationRuns``)."""
        with self._experiment_lock:
            body = self.store.get(parent, EXPERIMENTS, rid)
            if body is None:
                return  # deleted meanwhile: the run keeps its name of it, as the service's
            runs = list(body.get("evaluationRuns") or [])
            if run_name not in runs:
                runs.append(run_name)
            self.store.replace(
                parent,
                EXPERIMENTS,
                rid,
                {**body, "evaluationRuns": runs, "updateTime": now_rfc3339()},
            )

    def _run_source(self, parent: str, run: EvaluationRun) -> str:
        """The set or set revision a run evaluates, checked to exist in ``parent``."""
        data_source = run.data_source
        if data_source is not None and data_source.evaluation_set_revision:
            field, source = "dataSource.evaluationSetRevision", data_source.evaluation_set_revision
            set_name, rid = split_revision_name(source, SETS)
            found = self.store.get(set_name, REVISIONS, rid) is not None
        elif data_source is not None and data_source.evaluation_set:
            field, source = "dataSource.evaluationSet", data_source.evaluation_set
            set_name = source
            set_parent, set_id = split_name(set_name, SETS)
            found = self.store.get(set_parent, SETS, set_id) is not None
        elif data_source is not None and data_source.bigquery_request_set is not None:
            # A source the service takes (its replay tests read runs of one back): the request
            # is right, the emulator cannot serve it.
            raise ApiError(
                "UNIMPLEMENTED",
                "dataSource.bigqueryRequestSet: the emulator reads no BigQuery table; give an "
                "evaluationSet (platform-eval upload), or run against a project",
            )
        else:
            raise ApiError(
                "INVALID_ARGUMENT", "dataSource.evaluationSet or evaluationSetRevision is required"
            )
        if split_name(set_name, SETS)[0] != parent:
            raise ApiError("INVALID_ARGUMENT", f"{field} belongs to another project or location")
        if not found:
            raise ApiError("NOT_FOUND", f"{field}: {source} not found")
        return source

    def cancel_run(self, parent: str, rid: str, *, quiet: bool = False) -> None:
        def cancel(run: EvaluationRun) -> bool:
            if run.state == EvaluationRunState.CANCELLED or (quiet and run.done):
                return False
            if run.done:
                raise ApiError(
                    "FAILED_PRECONDITION", f"{run.name} already {run.state}; cannot cancel"
                )
            if run.state != EvaluationRunState.PENDING:
                # Being executed: it stops at its next item, with what it wrote so far.
                self.request_cancel(str(run.name))
                return False
            run.state = EvaluationRunState.CANCELLED
            run.completion_time = now()
            run.error = cancelled_status()
            return True

        name = f"{parent}/{RUNS}/{rid}"
        updated = self.update_run(name, cancel)
        if updated is None and not quiet:
            raise ApiError("NOT_FOUND", f"{name} not found")
        if updated is not None and updated.done:
            self.drop_run_input(name)

    def get_run_if_any(self, name: str) -> EvaluationRun | None:
        """The stored run, or None when it is gone."""
        parent, rid = split_name(name, RUNS)
        body = self.store.get(parent, RUNS, rid)
        return EvaluationRun.from_wire(body) if body is not None else None

    def update_run(
        self, name: str, update: Callable[[EvaluationRun], bool]
    ) -> EvaluationRun | None:
        """Applies ``update`` to the stored run unless it returns False; None if it is gone."""
        parent, rid = split_name(name, RUNS)
        with self._run_lock:
            body = self.store.get(parent, RUNS, rid)
            if body is None:
                return None
            run = EvaluationRun.from_wire(body)
            if update(run):
                self.store.replace(parent, RUNS, rid, run.to_wire())
            return run


@functools.cache
def _filterable(collection: str) -> frozenset[str] | None:
    """The fields a filter on ``collection`` may name: its resource's (camelCase)."""
    models: dict[str, type[WireModel]] = {
        ITEMS: EvaluationItem,
        SETS: EvaluationSet,
        RUNS: EvaluationRun,
        METRICS: EvaluationMetric,
        EXPERIMENTS: EvaluationExperiment,
        OPERATIONS: Operation,
    }
    model = models.get(collection)
    if model is None:
        return None
    return frozenset(field.alias or to_camel(name) for name, field in model.model_fields.items())


def _page_token(after_seq: int, binding: str) -> str:
    raw = json.dumps({"after": after_seq, "binding": binding}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _read_page_token(token: str | None, binding: str) -> int:
    if not token:
        return 0
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded))
        after = data["after"]
        bound = data["binding"]
    except (ValueError, KeyError, TypeError, RecursionError):
        raise ApiError("INVALID_ARGUMENT", "invalid pageToken") from None
    if type(after) is not int or not 0 <= after < 2**63 or not isinstance(bound, str):
        raise ApiError("INVALID_ARGUMENT", "invalid pageToken")
    if bound != binding:
        raise ApiError(
            "INVALID_ARGUMENT", "pageToken was issued for a different parent, collection or filter"
        )
    return after


def _refuse_inference(run: EvaluationRun) -> None:
    """A run that would have the service produce responses (a model, an agent, a Harbor run)
    is one the emulator cannot do: 501 naming the field, never a run that evaluates nothing."""
    for candidate, config in (run.inference_configs or {}).items():
        field = config.inference_field()
        if field is not None:
            raise ApiError(
                "UNIMPLEMENTED",
                f"inferenceConfigs[{json.dumps(candidate)}].{field}: {INFERENCE_UNIMPLEMENTED}",
            )


INFERENCE_UNIMPLEMENTED = (
    "the emulator does not run inference (a model or an agent producing the responses it then "
    "evaluates); record the candidate's responses locally (platform-eval run --agent, or "
    "--traces) and evaluate those, or run against a project"
)


#: What a create's answer leaves out (cloud-custodian's flight ``vertexai-evaluation-run-
#: filtering``, v1, 2026-08-14): a GET has them.
_NOT_CREATED = (wire_name(EvaluationItem, "create_time"), wire_name(EvaluationSet, "update_time"))
_COMPLETION = wire_name(EvaluationRun, "completion_time")


def _as_created(collection: str, stored: dict[str, Any]) -> dict[str, Any]:
    """A create's answer as the service's (the same flight): an item, a set or a run without
    ``createTime`` and ``updateTime``, a run with the placeholder completion time."""
    if collection not in (ITEMS, SETS, RUNS):
        return stored
    answer = {k: v for k, v in stored.items() if k not in _NOT_CREATED}
    if collection == RUNS and _COMPLETION not in answer:
        answer[_COMPLETION] = NO_COMPLETION_TIME
    return answer


def _with_pipeline_id(metadata: Any) -> Any:
    """The run's metadata with the ``pipeline_id`` the service writes there (every recorded
    run has one); a caller's own metadata (an object) is kept beside it, which no recording
    shows the service doing or not."""
    if metadata is not None and not isinstance(metadata, dict):
        return metadata
    return {**(metadata or {}), "pipeline_id": new_id()}


#: What the service leaves out of a run in a listing (the flight's GET evaluationRuns): a GET
#: of the run has them.
_NOT_LISTED = (_COMPLETION, wire_name(EvaluationRun, "evaluation_set_snapshot"))


def _as_listed(text: str) -> str:
    run = json.loads(text)
    if not any(name in run for name in _NOT_LISTED):
        return text
    return json.dumps({k: v for k, v in run.items() if k not in _NOT_LISTED})
