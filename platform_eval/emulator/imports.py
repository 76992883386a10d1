"""``evaluationSets:import``: a new set, and its items, from JSON Lines inline or in Cloud Storage.

As the service does, the request is checked when it arrives (one source, a destination), and the
data when it is read: a line that is not an EvaluationItem fails the operation, naming the line,
and nothing of the import is kept. Each item's payload is written under the destination and the
item keeps its ``gcsUri``, as the API documents for ``gcsDestination``.
"""

from __future__ import annotations

from typing import Any

from .._names import ITEMS, SETS
from ..types import EvaluationItem, EvaluationSet, ImportEvaluationSetRequest
from .backend import (
    OPERATIONS,
    ApiError,
    Backend,
    new_id,
    now,
    operation_body,
    parse_body,
    project_of,
    rpc_status,
    type_url,
)
from .bodies import parse_json
from .gcs import ObjectStore, parse_gs_prefix, parse_gs_uri
from .limits import Limits
from .store import encode_model

#: Sources the emulator reads; the others need a cloud service behind them.
_READ = ("inlineSource", "gcsSource")
#: Where the operation each request id was answered with is kept (never listed by the API).
_ANSWERED = "evaluationSets:import"

Row = tuple[str, str, str, dict[str, Any] | str, str | None]


class UnusableImportError(Exception):
    """The data of an import cannot be used: the operation finishes with this error."""


class SetImporter:
    def __init__(self, backend: Backend, objects: ObjectStore) -> None:
        self.backend = backend
        self.objects = objects

    def __call__(
        self, parent: str, body: Any, version: str, request_id: str | None
    ) -> dict[str, Any]:
        # Like a create, an import is answered once per request id: a retry whose first answer
        # was lost gets the first operation, not a second set.
        if request_id and (
            earlier := self.backend.store.by_request_id(parent, _ANSWERED, request_id)
        ):
            return earlier
        request = self._request(body, version)
        set_id = new_id()
        owner = f"{parent}/{SETS}/{set_id}"
        metadata = type_url(version, "GenericOperationMetadata")
        try:
            resources, objects, stored = self._read(parent, set_id, request, version)
        except UnusableImportError as failure:
            error = rpc_status("INVALID_ARGUMENT", str(failure))
            resources, objects = [], []
            op_id, operation = operation_body(owner, metadata=metadata, error=error)
        else:
            response = {"@type": type_url(version, "EvaluationSet"), **stored}
            op_id, operation = operation_body(owner, metadata=metadata, response=response)
        resources.append((owner, OPERATIONS, op_id, operation, None))
        if request_id:
            resources.append((parent, _ANSWERED, op_id, operation, request_id))
        self.backend.store.insert_batch(resources, objects)
        return operation

    @staticmethod
    def _request(body: Any, version: str) -> ImportEvaluationSetRequest:
        request = parse_body(ImportEvaluationSetRequest, body, version)
        sources = request.sources()
        if len(sources) != 1:
            raise ApiError(
                "INVALID_ARGUMENT", f"exactly one source is required, got {sources or 'none'}"
            )
        if sources[0] not in _READ:
            raise ApiError(
                "UNIMPLEMENTED",
                f"the emulator does not import from {sources[0]}; use inlineSource or gcsSource",
            )
        if request.import_mode not in (None, "IMPORT_MODE_UNSPECIFIED"):
            raise ApiError("INVALID_ARGUMENT", "importMode OVERWRITE is only for harborDataset")
        if request.evaluation_set is None:
            raise ApiError("INVALID_ARGUMENT", "evaluationSet is required")
        _destination(request)  # checked before anything is read
        source = request.inline_source or request.gcs_source
        assert source is not None
        data_format = (
            source.import_schema_config.data_format if source.import_schema_config else None
        )
        if data_format != "JSONL":
            raise ApiError(
                "UNIMPLEMENTED"
                if data_format in ("OTEL_JSON", "OTEL_PROTO")
                else "INVALID_ARGUMENT",
                f"importSchemaConfig.dataFormat {data_format!r}: the emulator imports JSONL",
            )
        return request

    def _data(self, parent: str, request: ImportEvaluationSetRequest) -> bytes:
        if request.inline_source is not None:
            return request.inline_source.content or b""
        uri = request.gcs_source.gcs_uri if request.gcs_source else None
        if not uri:
            raise ApiError("INVALID_ARGUMENT", "gcsSource.gcsUri is required")
        bucket, name = parse_gs_uri(uri)
        self.objects.claim(bucket, project_of(parent))
        try:
            data, _ = self.objects.get(bucket, name)
        except ApiError as error:
            raise UnusableImportError(f"cannot read {uri}: {error.message}") from None
        return data

    def _read(
        self, parent: str, set_id: str, request: ImportEvaluationSetRequest, version: str
    ) -> tuple[list[Row], list[tuple[str, str, bytes, str]], dict[str, Any]]:
        """The rows and objects the import writes, and the new set."""
        bucket, folder = _destination(request)
        self.objects.claim(bucket, project_of(parent))
        stamp = now()
        resources: list[Row] = []
        objects: list[tuple[str, str, bytes, str]] = []
        names: list[str] = []
        for number, line in enumerate(self._data(parent, request).splitlines(), start=1):
            if not line.strip():
                continue
            item = _item_of(line, number, self.objects.limits, version)
            rid = new_id()
            name = f"{parent}/{ITEMS}/{rid}"
            update: dict[str, Any] = {"name": name, "create_time": stamp}
            payload = item.evaluation_request or item.evaluation_response
            if payload is not None:
                object_name = f"{folder}evaluationItems/{rid}.json"
                objects.append(
                    (bucket, object_name, encode_model(payload).encode(), "application/json")
                )
                update.update(
                    evaluation_request=None,
                    evaluation_response=None,
                    gcs_uri=f"gs://{bucket}/{object_name}",
                )
            row = encode_model(item.model_copy(update=update))
            resources.append((parent, ITEMS, rid, row, None))
            names.append(name)
        if not names:
            raise UnusableImportError("the source holds no items")
        given = request.evaluation_set
        assert given is not None  # checked by _request
        evaluation_set = EvaluationSet(
            name=f"{parent}/{SETS}/{set_id}",
            display_name=given.display_name,
            metadata=given.metadata,
            evaluation_items=names,
            create_time=stamp,
            update_time=stamp,
        ).to_wire()
        resources.append((parent, SETS, set_id, evaluation_set, None))
        return resources, objects, evaluation_set


def _destination(request: ImportEvaluationSetRequest) -> tuple[str, str]:
    """(bucket, folder) the payloads go to; the folder is empty or ends with ``/``."""
    prefix = request.gcs_destination.output_uri_prefix if request.gcs_destination else None
    if not prefix:
        raise ApiError("INVALID_ARGUMENT", "gcsDestination.outputUriPrefix is required")
    return parse_gs_prefix(prefix)


def _item_of(line: bytes, number: int, limits: Limits, version: str) -> EvaluationItem:
    try:
        # The same checks as a request body: a NaN or an overflowing number stored from an
        # import line would break every later query of the project.
        value = parse_json(line, what="the line", limits=limits)
    except ApiError as error:
        raise UnusableImportError(f"line {number}: {error.message}") from None
    try:
        return Backend.new_item(value, version)
    except ApiError as error:
        raise UnusableImportError(f"line {number}: {error.message}") from None
