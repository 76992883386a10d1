"""The small part of the Cloud Storage JSON API that evaluation clients use, on the same store.

Bucket get, object upload (``uploadType=media`` and ``multipart``), object metadata and download
(``alt=media``). Buckets exist as soon as they are named. With ``STORAGE_EMULATOR_HOST`` set to
the emulator's URL, google-cloud-storage (and so the official evaluation client) talks to it.

A bucket belongs to the first project that uses it (through the evaluation API, or a storage
request naming ``userProject`` / ``x-goog-user-project``); another project's runs and items
cannot read or write it, as API resources of one project are invisible to another.
"""

from __future__ import annotations

import base64
import hashlib
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import multipart
from .backend import ApiError
from .bodies import parse_json, parse_json_object, read_body
from .limits import Limits
from .store import Store, encode


def parse_gs_uri(uri: str) -> tuple[str, str]:
    if not uri.startswith("gs://") or "/" not in uri[5:]:
        raise ApiError("INVALID_ARGUMENT", f"{uri!r} is not a gs://bucket/object URI")
    bucket, name = uri[5:].split("/", 1)
    return bucket, name


def parse_gs_prefix(prefix: str) -> tuple[str, str]:
    """(bucket, folder) of a ``gs://bucket[/folder]`` prefix; the folder is empty or ends with
    ``/`` (the API appends the one a prefix lacks)."""
    bucket, _, folder = prefix.removeprefix("gs://").partition("/")
    if not prefix.startswith("gs://") or not bucket:
        raise ApiError("INVALID_ARGUMENT", f"{prefix!r} is not a gs://bucket/prefix")
    folder = folder.rstrip("/")
    return bucket, f"{folder}/" if folder else ""


class ObjectStore:
    def __init__(self, store: Store, limits: Limits) -> None:
        self.store = store
        #: A stored payload is read as a request body is, with the same bounds.
        self.limits = limits

    def put(self, bucket: str, name: str, data: bytes, content_type: str | None) -> dict[str, Any]:
        generation = time.time_ns()
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO objects (bucket, name, data, content_type, generation) "
                "VALUES (?,?,?,?,?) "
                "ON CONFLICT (bucket, name) DO UPDATE SET data=excluded.data, "
                "content_type=excluded.content_type, generation=excluded.generation",
                (bucket, name, data, content_type, generation),
            )
        return self._resource(bucket, name, data, content_type, generation)

    def get(self, bucket: str, name: str) -> tuple[bytes, dict[str, Any]]:
        with self.store.transaction() as db:
            row = db.execute(
                "SELECT data, content_type, generation FROM objects WHERE bucket=? AND name=?",
                (bucket, name),
            ).fetchone()
        if row is None:
            raise ApiError("NOT_FOUND", f"No such object: {bucket}/{name}")
        data, content_type, generation = row
        return bytes(data), self._resource(bucket, name, bytes(data), content_type, generation)

    def claim(self, bucket: str, project: str) -> None:
        """Makes ``project`` the bucket's owner if it has none; PERMISSION_DENIED for others."""
        with self.store.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO buckets (bucket, project) VALUES (?, ?)", (bucket, project)
            )
            (owner,) = db.execute(
                "SELECT project FROM buckets WHERE bucket=?", (bucket,)
            ).fetchone()
        if owner != project:
            raise ApiError(
                "PERMISSION_DENIED",
                f"bucket {bucket} belongs to another project; project {project} cannot use it",
            )

    def read_json(self, uri: str, project: str) -> Any:
        bucket, name = parse_gs_uri(uri)
        self.claim(bucket, project)
        data, _ = self.get(bucket, name)
        # Checked as a request body is: a payload is stored and queried like one.
        return parse_json(data, what=uri, limits=self.limits)

    def write_json(self, uri: str, payload: Any, project: str) -> None:
        bucket, name = parse_gs_uri(uri)
        self.claim(bucket, project)
        self.put(bucket, name, encode(payload).encode(), "application/json")

    @staticmethod
    def _resource(
        bucket: str, name: str, data: bytes, content_type: str | None, generation: int
    ) -> dict[str, Any]:
        md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
        return {
            "kind": "storage#object",
            "id": f"{bucket}/{name}/{generation}",
            "name": name,
            "bucket": bucket,
            "generation": str(generation),
            "metageneration": "1",
            "contentType": content_type or "application/octet-stream",
            "size": str(len(data)),
            "md5Hash": md5,
        }


def _gcs_error(error: ApiError) -> JSONResponse:
    return JSONResponse(
        {
            "error": {
                "code": error.http_status,
                "message": error.message,
                "errors": [{"message": error.message}],
            }
        },
        status_code=error.http_status,
    )


def _multipart(
    body: bytes, content_type: str, limits: Limits
) -> tuple[dict[str, Any], bytes, str | None]:
    metadata_part, media_part = multipart.parse(body, content_type)
    metadata = (
        parse_json_object(metadata_part.data, what="the upload's metadata part", limits=limits)
        if metadata_part.data.strip()
        else {}
    )
    return metadata, media_part.data, media_part.content_type


def _string(metadata: dict[str, Any], key: str) -> str | None:
    value = metadata.get(key)
    if value is not None and not isinstance(value, str):
        raise ApiError("INVALID_ARGUMENT", f"the object's {key} must be a string")
    return value


class GcsRoutes:
    def __init__(self, objects: ObjectStore) -> None:
        self.objects = objects

    def routes(self) -> list[Route]:
        return [
            Route("/storage/v1/b/{bucket}", self.bucket, methods=["GET"]),
            Route("/upload/storage/v1/b/{bucket}/o", self.upload, methods=["POST"]),
            Route("/download/storage/v1/b/{bucket}/o/{name:path}", self.object, methods=["GET"]),
            Route("/storage/v1/b/{bucket}/o/{name:path}", self.object, methods=["GET"]),
        ]

    def _check_project(self, request: Request, bucket: str) -> None:
        project = request.query_params.get("userProject") or request.headers.get(
            "x-goog-user-project"
        )
        if project:
            self.objects.claim(bucket, project)

    async def bucket(self, request: Request) -> Response:
        name = request.path_params["bucket"]
        try:
            self._check_project(request, name)
        except ApiError as error:
            return _gcs_error(error)
        return JSONResponse({"kind": "storage#bucket", "id": name, "name": name, "location": "US"})

    async def upload(self, request: Request) -> Response:
        bucket = request.path_params["bucket"]
        upload_type = request.query_params.get("uploadType", "media")
        try:
            self._check_project(request, bucket)
            body = await read_body(request, self.objects.limits.body_bytes)
            if upload_type == "multipart":
                metadata, data, media_type = _multipart(
                    body, request.headers.get("content-type", ""), self.objects.limits
                )
                name = _string(metadata, "name") or request.query_params.get("name")
                content_type = _string(metadata, "contentType") or media_type
            elif upload_type == "media":
                name = request.query_params.get("name")
                data, content_type = body, request.headers.get("content-type")
            else:
                raise ApiError(
                    "INVALID_ARGUMENT", f"uploadType={upload_type} is not supported by the emulator"
                )
            if not name:
                raise ApiError("INVALID_ARGUMENT", "the object needs a name")
            return JSONResponse(self.objects.put(bucket, name, data, content_type))
        except ApiError as error:
            return _gcs_error(error)

    async def object(self, request: Request) -> Response:
        """Object metadata; its bytes only with ``alt=media``, on either path, as Cloud Storage."""
        try:
            self._check_project(request, request.path_params["bucket"])
            data, resource = self.objects.get(
                request.path_params["bucket"], request.path_params["name"]
            )
        except ApiError as error:
            return _gcs_error(error)
        if request.query_params.get("alt") != "media":
            return JSONResponse(resource)
        return Response(
            data,
            media_type=resource["contentType"],
            headers={
                "x-goog-hash": f"md5={resource['md5Hash']}",
                "x-goog-generation": resource["generation"],
            },
        )
