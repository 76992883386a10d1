"""Every API method as a pure description: the call to send and how to read its answer.

Both clients run these through their transport, so the sync and async surfaces share one
implementation of everything that is not I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import ValidationError

from . import _names
from ._gc import collector_paused
from ._listing import Listing
from ._names import EXPERIMENTS, ITEMS, METRICS, REVISIONS, RUNS, SETS
from ._pagination import NEXT_PAGE_TOKEN, Page
from ._result_items import run_filter
from ._transport import ApiCall, non_finite_path
from .errors import InvalidRequestError, InvalidResponseError
from .types import (
    EvaluateDatasetRequest,
    EvaluateInstancesRequest,
    EvaluateInstancesResponse,
    EvaluationExperiment,
    EvaluationItem,
    EvaluationItemRevision,
    EvaluationItemType,
    EvaluationMetric,
    EvaluationRequest,
    EvaluationResult,
    EvaluationRun,
    EvaluationRunConfig,
    EvaluationRunDataSource,
    EvaluationRunMetric,
    EvaluationSet,
    EvaluationSetRevision,
    GcsDestination,
    GenerateInstanceRubricsRequest,
    GenerateInstanceRubricsResponse,
    GenerateLossClustersRequest,
    GenerateUserScenariosRequest,
    GenerateUserScenariosResponse,
    ImportEvaluationSetRequest,
    ImportGcsSource,
    ImportInlineSource,
    ImportSchemaConfig,
    InferenceConfig,
    Operation,
    WireModel,
)

T = TypeVar("T")
M = TypeVar("M", bound=WireModel)

#: What a metric may be given as: a name, a wire dict, or a typed metric.
MetricLike = str | Mapping[str, Any] | EvaluationRunMetric


@dataclass(frozen=True)
class Op(Generic[T]):
    call: ApiCall
    parse: Callable[[Any], T]

    def read(self, body: Any) -> T:
        """The answer parsed; one that does not fit the API's schema (a field of the wrong
        type) is an InvalidResponseError naming the call and the fields, not pydantic's own."""
        try:
            return self.parse(body)
        except ValidationError as exc:
            raise _misfit_answer(self.call, exc) from None


def _misfit_answer(call: ApiCall, error: ValidationError) -> InvalidResponseError:
    return InvalidResponseError(
        f"the answer to {call.method} {call.resource or call.path} does not fit the API's "
        f"schema: {_misfits(error)}"
    )


#: Segments of a pydantic error location that name a type tried, not a field.
_TYPE_TAG = re.compile(r"[\[\-]|^(str|int|float|bool|list|dict|none|json-or-python)$")


def _misfits(error: ValidationError) -> str:
    """Each wrong field once, with what was expected: the first three, and how many more."""
    found: dict[str, str] = {}
    for entry in error.errors():
        where = ".".join(str(part) for part in entry["loc"] if not _TYPE_TAG.search(str(part)))
        found.setdefault(where or "$", str(entry["msg"]))
    shown = "; ".join(f"{where}: {message}" for where, message in list(found.items())[:3])
    return shown + (f" (and {len(found) - 3} more)" if len(found) > 3 else "")


def _run_display_name() -> str:
    """The service requires a run's display name: one that says when, unless one is given."""
    return f"platform-eval {datetime.now(UTC):%Y-%m-%d %H:%M:%S}"


def _coerce(model: type[M], value: M | Mapping[str, Any]) -> M:
    if isinstance(value, model):
        return value
    if isinstance(value, Mapping):
        return model.model_validate(dict(value))
    raise TypeError(f"expected {model.__name__} or a dict, got {type(value).__name__}")


_OUTPUT_ONLY = {"name", "create_time", "update_time"}


def _request_body(resource: WireModel) -> dict[str, Any]:
    """A resource as a request body: output-only fields are the server's to set."""
    return resource.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=_OUTPUT_ONLY)


def _request_json(resource: WireModel) -> bytes:
    """``_request_body`` as JSON bytes written by pydantic-core from the model, with no dict in
    between (half the time of dumping a dict and encoding it).

    A NaN or infinite number (only a free-form field can hold one) would come out as a bare
    ``NaN``, which is not JSON: such a body is refused naming the field, as the transport does.
    """
    data: bytes = type(resource).__pydantic_serializer__.to_json(
        resource, by_alias=True, exclude_none=True, exclude=_OUTPUT_ONLY
    )
    if b"NaN" in data or b"Infinity" in data:
        # Most likely text that says so; the dict is checked to tell.
        body = _request_body(resource)
        where = non_finite_path(body)
        if where is not None:
            raise InvalidRequestError(
                f"{where} is NaN or infinite, which JSON cannot carry [{type(resource).__name__}]"
            )
    return data


#: ``evaluationSets:import`` takes inline data under 4 MB; above, it goes through Cloud Storage.
INLINE_IMPORT_LIMIT = 4_000_000

#: Items come by the thousand (results, uploads found again): a round trip per 1,000 rather
#: than the server's default 100. A server caps it at its largest page (AIP-158).
ITEMS_PAGE_SIZE = 1000
#: Page sizes asked for when the caller names none (the server's default otherwise).
DEFAULT_PAGE_SIZES = {ITEMS: ITEMS_PAGE_SIZE}
#: Results are read a page ahead, so two pages' JSON text is in memory at once (their items are
#: built a few at a time): 250 keeps a pull's peak under twice its JSON from 2,000 three-turn
#: agent items up (500: 2.5x), and reading one page still outlasts the round trip of the next
#: (benchmarks/bench_results.py).
RESULTS_PAGE_SIZE = 250


def _ignore(_: Any) -> None:
    return None


def jsonl(items: Iterable[EvaluationItem | Mapping[str, Any]]) -> bytes:
    """Items as JSON Lines of their wire form (the JSONL an import reads), checked as typed."""
    return b"\n".join(_request_json(_coerce(EvaluationItem, item)) for item in items)


def _split_gs_uri(gcs_uri: str) -> tuple[str, str]:
    bucket, _, name = gcs_uri.removeprefix("gs://").partition("/")
    if not gcs_uri.startswith("gs://") or not bucket or not name:
        raise ValueError(f"{gcs_uri!r} is not a gs://bucket/object URI")
    return bucket, name


def _operation(body: Any) -> Operation:
    # A delete answered with google.protobuf.Empty (``{}``) is an operation already done.
    return Operation.from_wire(body or {})


def to_metric(metric: MetricLike) -> EvaluationRunMetric:
    if isinstance(metric, EvaluationRunMetric):
        return metric
    if isinstance(metric, str):
        return EvaluationRunMetric(metric=metric)
    return EvaluationRunMetric.model_validate(dict(metric))


class Operations:
    """Builds the calls for one ``projects/{p}/locations/{l}`` parent."""

    def __init__(self, parent: str, storage_url: str = "https://storage.googleapis.com") -> None:
        self.parent = parent
        self.storage_url = storage_url.rstrip("/")

    def read_object(self, gcs_uri: str) -> Op[Any]:
        """Downloads a ``gs://`` JSON object (an item's payload kept in Cloud Storage)."""
        bucket, name = _split_gs_uri(gcs_uri)
        where = f"b/{quote(bucket, safe='')}/o/{quote(name, safe='')}"
        url = f"{self.storage_url}/download/storage/v1/{where}"
        # Without alt=media Cloud Storage answers with the object's metadata, not its bytes.
        call = ApiCall("GET", gcs_uri, params={"alt": "media"}, url=url, resource=gcs_uri)
        return Op(call, lambda body: body)

    def write_object(self, gcs_uri: str, data: bytes, content_type: str) -> Op[Any]:
        """Uploads ``data`` to a ``gs://`` object (a large import's source), replacing it."""
        bucket, name = _split_gs_uri(gcs_uri)
        url = f"{self.storage_url}/upload/storage/v1/b/{quote(bucket, safe='')}/o"
        params = {"uploadType": "media", "name": name}
        call = ApiCall(
            "POST",
            gcs_uri,
            params=params,
            url=url,
            resource=gcs_uri,
            raw=data,
            raw_type=content_type,
        )
        return Op(call, lambda body: body)

    def name(self, collection: str, obj: Any) -> str:
        return _names.resource_name(self.parent, collection, _names.name_of(obj, collection))

    # -- generic shapes -------------------------------------------------------------------

    def _create(
        self,
        collection: str,
        model: type[M],
        body: M | Mapping[str, Any],
        request_id: str | None,
        params: dict[str, str] | None = None,
    ) -> Op[M]:
        call = ApiCall(
            "POST",
            f"{self.parent}/{collection}",
            params=params or {},
            raw=_request_json(_coerce(model, body)),
            raw_type="application/json",
            resource=f"{self.parent}/{collection}",
            is_create=True,
            request_id=request_id,
        )
        return Op(call, model.from_wire)

    def _get(self, collection: str, model: type[M], obj: Any) -> Op[M]:
        name = self.name(collection, obj)
        return Op(ApiCall("GET", name, resource=name), model.from_wire)

    def _delete(self, collection: str, obj: Any, force: bool = False) -> Op[Operation]:
        name = self.name(collection, obj)
        params = {"force": "true"} if force else {}
        return Op(ApiCall("DELETE", name, params=params, resource=name), _operation)

    def list_page(
        self,
        collection: str,
        model: type[M],
        *,
        filter: str | None,
        page_size: int | None,
        page_token: str | None,
        order_by: str | None = None,
        parent: str | None = None,
        key: str | None = None,
    ) -> Op[Page[M]]:
        """One page of a collection (under ``parent``, the location by default), listed in the
        response under ``key`` (the collection's name by default)."""
        call = self._list_call(collection, filter, page_size, page_token, order_by, parent)

        def parse(body: Any) -> Page[M]:
            body = body or {}
            entries = body.get(key or collection) or []
            items = []
            with collector_paused():
                for index, entry in enumerate(entries):
                    items.append(model.from_wire(entry))
                    entries[index] = None  # each entry's JSON goes as soon as its model exists
            return Page(
                items=items,
                next_page_token=body.get(NEXT_PAGE_TOKEN) or None,
            )

        return Op(call, parse)

    def _list_call(
        self,
        collection: str,
        filter: str | None,
        page_size: int | None,
        page_token: str | None,
        order_by: str | None,
        parent: str | None,
    ) -> ApiCall:
        page_size = page_size or DEFAULT_PAGE_SIZES.get(collection)
        params: dict[str, str] = {}
        if filter:
            params["filter"] = filter
        if page_size:
            if page_size < 0:
                raise ValueError("page_size must be positive")
            params["pageSize"] = str(page_size)
        if page_token:
            params["pageToken"] = page_token
        if order_by:
            params["orderBy"] = order_by
        path = f"{parent or self.parent}/{collection}"
        return ApiCall("GET", path, params=params, resource=path)

    # -- operations (google.longrunning) ------------------------------------------------

    def get_operation(self, operation: Any) -> Op[Operation]:
        name = _names.operation_name(_names.name_of(operation, "operation"))
        return Op(ApiCall("GET", name, resource=name), _operation)

    def wait_operation(self, operation: Any, timeout: float | None) -> Op[Operation]:
        """The service's ``:wait``: answers when the operation is done or ``timeout`` passed."""
        name = _names.operation_name(_names.name_of(operation, "operation"))
        body = {} if timeout is None else {"timeout": f"{max(timeout, 0):.3f}s"}
        return Op(ApiCall("POST", f"{name}:wait", body=body, resource=name), _operation)

    def delete_operation(self, operation: Any) -> Op[None]:
        name = _names.operation_name(_names.name_of(operation, "operation"))
        return Op(ApiCall("DELETE", name, resource=name), _ignore)

    def list_operations_page(
        self, resource: Any, filter: str | None, page_size: int | None, page_token: str | None
    ) -> Op[Page[Operation]]:
        """The operations of one resource (an item, a set, a run, a metric)."""
        owner = _names.operations_owner(_names.name_of(resource, "resource"))
        return self.list_page(
            "operations",
            Operation,
            filter=filter,
            page_size=page_size,
            page_token=page_token,
            parent=owner,
        )

    # -- evaluationItems ------------------------------------------------------------------

    def create_item(
        self, item: EvaluationItem | Mapping[str, Any], request_id: str | None
    ) -> Op[EvaluationItem]:
        return self._create(ITEMS, EvaluationItem, item, request_id)

    @staticmethod
    def payload_apart(
        item: EvaluationItem | Mapping[str, Any], gcs_uri: str
    ) -> tuple[EvaluationItem, bytes]:
        """The item pointing at ``gcs_uri`` instead of holding its payload (its request, or a
        RESULT item's response), and that payload as the JSON to write there."""
        built = item if isinstance(item, EvaluationItem) else EvaluationItem.model_validate(item)
        payload = built.evaluation_response or built.evaluation_request
        if payload is None:
            raise ValueError("gcs_uri: the item holds no request or response to write there")
        _split_gs_uri(gcs_uri)  # a gs://bucket/object URI, or ValueError saying what it is
        data = json.dumps(payload.to_wire(), ensure_ascii=False).encode()
        apart = built.model_copy(
            update={"evaluation_request": None, "evaluation_response": None, "gcs_uri": gcs_uri}
        )
        return apart, data

    def get_item(self, item: Any) -> Op[EvaluationItem]:
        return self._get(ITEMS, EvaluationItem, item)

    @staticmethod
    def payload_uri(item: EvaluationItem) -> str | None:
        """The gs:// URI to read when the item keeps its payload in Cloud Storage."""
        if not item.gcs_uri or item.evaluation_request or item.evaluation_response:
            return None
        if item.evaluation_item_type not in (EvaluationItemType.REQUEST, EvaluationItemType.RESULT):
            return None
        return item.gcs_uri

    @staticmethod
    def with_payload(item: EvaluationItem, payload: Any) -> EvaluationItem:
        if item.evaluation_item_type == EvaluationItemType.RESULT:
            return item.model_copy(
                update={"evaluation_response": EvaluationResult.from_wire(payload)}
            )
        return item.model_copy(update={"evaluation_request": EvaluationRequest.from_wire(payload)})

    def delete_item(self, item: Any, force: bool = False) -> Op[Operation]:
        return self._delete(ITEMS, item, force)

    def result_items_page(
        self, run_name: str, page_token: str | None, page_size: int = RESULTS_PAGE_SIZE
    ) -> Op[Iterator[EvaluationItem]]:
        """A page of the items a run wrote, found by listing rather than one GET each; each
        item is decoded and built as it is read (a page's JSON objects never all exist). The
        next page's token is the pager's to read from the answer (``PageTokens``)."""
        call = self._list_call(ITEMS, run_filter(run_name), page_size, page_token, None, None)
        call = replace(call, listing=ITEMS)

        def built(entries: Iterator[Any]) -> Iterator[EvaluationItem]:
            for entry in entries:
                try:
                    yield EvaluationItem.from_wire(entry)
                except ValidationError as exc:
                    raise _misfit_answer(call, exc) from None

        def parse(body: Any) -> Iterator[EvaluationItem]:
            listing = body if isinstance(body, Listing) else Listing("{}", ITEMS)
            return built(listing.entries())

        return Op(call, parse)

    # -- evaluationSets -------------------------------------------------------------------

    def build_set(
        self,
        evaluation_set: EvaluationSet | Mapping[str, Any] | None,
        display_name: str | None,
        items: Iterable[Any] | None,
    ) -> EvaluationSet:
        if evaluation_set is not None:
            if display_name is not None or items is not None:
                raise ValueError("pass either an evaluation set or display_name/items, not both")
            return _coerce(EvaluationSet, evaluation_set)
        return EvaluationSet(
            display_name=display_name,
            evaluation_items=[self.name(ITEMS, item) for item in items or ()],
        )

    def _with_item_names(self, evaluation_set: EvaluationSet) -> EvaluationSet:
        """The set with every member as a full item name (members may be given as ids)."""
        if not evaluation_set.evaluation_items:
            return evaluation_set
        names = [self.name(ITEMS, item) for item in evaluation_set.evaluation_items]
        return evaluation_set.model_copy(update={"evaluation_items": names})

    def create_set(
        self, evaluation_set: EvaluationSet, request_id: str | None
    ) -> Op[EvaluationSet]:
        return self._create(SETS, EvaluationSet, self._with_item_names(evaluation_set), request_id)

    @staticmethod
    def build_import(
        items: Iterable[EvaluationItem | Mapping[str, Any]] | None,
        *,
        evaluation_set: EvaluationSet | Mapping[str, Any] | None,
        display_name: str | None,
        gcs_destination: str,
        source_uri: str | None,
        staging_uri: str | None,
        content: bytes | None = None,
    ) -> tuple[ImportEvaluationSetRequest, tuple[str, bytes] | None]:
        """The import request, and the object to upload first: (``staging_uri``, JSON Lines)."""
        if sum(given is not None for given in (items, source_uri, content)) != 1:
            raise ValueError(
                "import_set needs one of items, content (JSON Lines) or source_uri (a gs:// "
                "JSONL object)"
            )
        if evaluation_set is not None and display_name is not None:
            raise ValueError("pass either an evaluation set or display_name, not both")
        wanted = (
            _coerce(EvaluationSet, evaluation_set)
            if evaluation_set is not None
            else EvaluationSet(display_name=display_name)
        )
        config = ImportSchemaConfig(data_format="JSONL")
        request = ImportEvaluationSetRequest(
            evaluation_set=wanted, gcs_destination=GcsDestination(output_uri_prefix=gcs_destination)
        )
        if not gcs_destination.startswith("gs://") or not gcs_destination[5:].split("/")[0]:
            raise ValueError(f"{gcs_destination!r} is not a gs://bucket/prefix")
        if source_uri is not None:  # a JSONL object already in Cloud Storage
            _split_gs_uri(source_uri)
            request.gcs_source = ImportGcsSource(gcs_uri=source_uri, import_schema_config=config)
            return request, None
        data = content if content is not None else jsonl(items or ())
        if staging_uri is not None:  # ours, uploaded there first
            _split_gs_uri(staging_uri)
            request.gcs_source = ImportGcsSource(gcs_uri=staging_uri, import_schema_config=config)
            return request, (staging_uri, data)
        if len(data) >= INLINE_IMPORT_LIMIT:
            raise ValueError(
                f"{len(data):,} bytes of items is over the 4 MB an inline import takes: pass "
                "staging_uri='gs://bucket/object.jsonl' to import them through Cloud Storage"
            )
        request.inline_source = ImportInlineSource(content=data, import_schema_config=config)
        return request, None

    def import_set(
        self, request: ImportEvaluationSetRequest, request_id: str | None
    ) -> Op[Operation]:
        path = f"{self.parent}/{SETS}:import"
        call = ApiCall(
            "POST",
            path,
            body=request.to_wire(),
            resource=f"{self.parent}/{SETS}",
            is_create=True,
            request_id=request_id,
        )
        return Op(call, _operation)

    def get_set(self, evaluation_set: Any) -> Op[EvaluationSet]:
        return self._get(SETS, EvaluationSet, evaluation_set)

    def delete_set(self, evaluation_set: Any, force: bool = False) -> Op[Operation]:
        return self._delete(SETS, evaluation_set, force)

    def update_set(
        self, evaluation_set: EvaluationSet | Mapping[str, Any], update_mask: Sequence[str] | None
    ) -> Op[EvaluationSet]:
        typed = self._with_item_names(_coerce(EvaluationSet, evaluation_set))
        return self._update(SETS, typed, update_mask)

    def _update(self, collection: str, resource: M, update_mask: Sequence[str] | None) -> Op[M]:
        name = self.name(collection, resource)
        body = _request_body(resource)
        # Without an explicit mask, update exactly the fields the caller set ("*": every one).
        mask = list(update_mask) if update_mask is not None else sorted(body)
        if not mask:
            raise ValueError(f"updating {collection} needs at least one field to update")
        call = ApiCall(
            "PATCH", name, params={"updateMask": ",".join(mask)}, body=body, resource=name
        )
        return Op(call, type(resource).from_wire)

    # -- revisions (v1beta1) ----------------------------------------------------------------

    def create_set_revision(self, evaluation_set: Any, request_id: str | None) -> Op[Operation]:
        owner = self.name(SETS, evaluation_set)
        path = f"{owner}/{REVISIONS}"
        call = ApiCall("POST", path, body={}, resource=path, is_create=True, request_id=request_id)
        return Op(call, _operation)

    def get_set_revision(self, revision: Any) -> Op[EvaluationSetRevision]:
        name = _names.revision_name(_names.name_of(revision, "set revision"), SETS)
        return Op(ApiCall("GET", name, resource=name), EvaluationSetRevision.from_wire)

    def list_set_revisions_page(
        self, evaluation_set: Any, page_size: int | None, page_token: str | None
    ) -> Op[Page[EvaluationSetRevision]]:
        return self.list_page(
            REVISIONS,
            EvaluationSetRevision,
            filter=None,
            page_size=page_size,
            page_token=page_token,
            parent=self.name(SETS, evaluation_set),
            key=_names.SET_REVISIONS_LIST_KEY,
        )

    def delete_set_revision(self, revision: Any) -> Op[Operation]:
        name = _names.revision_name(_names.name_of(revision, "set revision"), SETS)
        return Op(ApiCall("DELETE", name, resource=name), _operation)

    def get_item_revision(self, revision: Any) -> Op[EvaluationItemRevision]:
        name = _names.revision_name(_names.name_of(revision, "item revision"), ITEMS)
        return Op(ApiCall("GET", name, resource=name), EvaluationItemRevision.from_wire)

    # -- evaluationRuns -------------------------------------------------------------------

    def build_run(
        self,
        run: EvaluationRun | Mapping[str, Any] | None,
        *,
        evaluation_set: Any,
        metrics: Sequence[MetricLike] | None,
        display_name: str | None,
        labels: Mapping[str, str] | None,
        metadata: Any = None,
        inference_configs: Mapping[str, Any] | None = None,
    ) -> EvaluationRun:
        if run is not None:
            if evaluation_set is not None or metrics is not None:
                raise ValueError("pass either a run or evaluation_set/metrics, not both")
            given = _coerce(EvaluationRun, run)
            if given.display_name:
                return given
            return given.model_copy(update={"display_name": _run_display_name()})
        if evaluation_set is None:
            raise ValueError("create_run needs evaluation_set=...")
        if not metrics:
            raise ValueError("create_run needs at least one metric")
        if isinstance(metrics, str | Mapping | EvaluationRunMetric):
            raise TypeError("metrics must be a list, e.g. metrics=['exact_match']")
        return EvaluationRun(
            display_name=display_name or _run_display_name(),
            metadata=metadata,
            labels=dict(labels) if labels else None,
            data_source=self._data_source(evaluation_set),
            evaluation_config=EvaluationRunConfig(metrics=[to_metric(m) for m in metrics]),
            inference_configs=(
                {name: _coerce(InferenceConfig, c) for name, c in inference_configs.items()}
                if inference_configs
                else None
            ),
        )

    def _data_source(self, evaluation_set: Any) -> EvaluationRunDataSource:
        """A set, or a set revision: a run on a revision evaluates its frozen items."""
        name = _names.name_of(evaluation_set, "evaluation set")
        if _names.is_revision_name(name, SETS):
            return EvaluationRunDataSource(evaluation_set_revision=_names.revision_name(name, SETS))
        return EvaluationRunDataSource(evaluation_set=self.name(SETS, name))

    def create_run(self, run: EvaluationRun, request_id: str | None) -> Op[EvaluationRun]:
        return self._create(RUNS, EvaluationRun, run, request_id)

    def get_run(self, run: Any) -> Op[EvaluationRun]:
        return self._get(RUNS, EvaluationRun, run)

    def delete_run(self, run: Any) -> Op[Operation]:
        return self._delete(RUNS, run)

    def cancel_run(self, run: Any) -> Op[None]:
        name = self.name(RUNS, run)
        return Op(ApiCall("POST", f"{name}:cancel", body={}, resource=name), _ignore)

    # -- evaluationMetrics ----------------------------------------------------------------

    def create_metric(
        self,
        metric: EvaluationMetric | Mapping[str, Any],
        request_id: str | None,
        metric_id: str | None = None,
    ) -> Op[EvaluationMetric]:
        params = {"evaluationMetricId": metric_id} if metric_id else None
        return self._create(METRICS, EvaluationMetric, metric, request_id, params)

    def get_metric(self, metric: Any) -> Op[EvaluationMetric]:
        return self._get(METRICS, EvaluationMetric, metric)

    def delete_metric(self, metric: Any) -> Op[Operation]:
        return self._delete(METRICS, metric)

    # -- the location's own methods -------------------------------------------------------

    def evaluate_instances(
        self, request: EvaluateInstancesRequest | Mapping[str, Any]
    ) -> Op[EvaluateInstancesResponse]:
        # A mapping travels as it is: the per-metric inputs (bleuInput, ...) are the
        # service's to check, field by field.
        body = request.to_wire() if isinstance(request, WireModel) else dict(request)
        path = f"{self.parent}:evaluateInstances"
        call = ApiCall("POST", path, body=body, resource=path)
        return Op(call, EvaluateInstancesResponse.from_wire)

    def _location_method(
        self, verb: str, model: type[M], request: M | Mapping[str, Any], parse: Callable[..., T]
    ) -> Op[T]:
        """A POST to a method of the location itself (``{parent}:{verb}``)."""
        path = f"{self.parent}:{verb}"
        body = _coerce(model, request).to_wire()
        return Op(ApiCall("POST", path, body=body, resource=path), parse)

    def generate_rubrics(
        self, request: GenerateInstanceRubricsRequest | Mapping[str, Any]
    ) -> Op[GenerateInstanceRubricsResponse]:
        return self._location_method(
            "generateInstanceRubrics",
            GenerateInstanceRubricsRequest,
            request,
            GenerateInstanceRubricsResponse.from_wire,
        )

    def generate_loss_clusters(
        self, request: GenerateLossClustersRequest | Mapping[str, Any]
    ) -> Op[Operation]:
        return self._location_method(
            "generateLossClusters", GenerateLossClustersRequest, request, _operation
        )

    def generate_user_scenarios(
        self, request: GenerateUserScenariosRequest | Mapping[str, Any]
    ) -> Op[GenerateUserScenariosResponse]:
        return self._location_method(
            "generateUserScenarios",
            GenerateUserScenariosRequest,
            request,
            GenerateUserScenariosResponse.from_wire,
        )

    def evaluate_dataset(
        self, request: EvaluateDatasetRequest | Mapping[str, Any]
    ) -> Op[Operation]:
        return self._location_method("evaluateDataset", EvaluateDatasetRequest, request, _operation)

    # -- evaluationExperiments ------------------------------------------------------------

    def create_experiment(
        self, experiment: EvaluationExperiment | Mapping[str, Any], request_id: str | None
    ) -> Op[EvaluationExperiment]:
        return self._create(EXPERIMENTS, EvaluationExperiment, experiment, request_id)

    def get_experiment(self, experiment: Any) -> Op[EvaluationExperiment]:
        return self._get(EXPERIMENTS, EvaluationExperiment, experiment)

    def update_experiment(
        self,
        experiment: EvaluationExperiment | Mapping[str, Any],
        update_mask: Sequence[str] | None,
    ) -> Op[EvaluationExperiment]:
        return self._update(EXPERIMENTS, _coerce(EvaluationExperiment, experiment), update_mask)

    def delete_experiment(self, experiment: Any) -> Op[Operation]:
        return self._delete(EXPERIMENTS, experiment)
