"""Request bodies the emulator accepts: bounded, strict JSON, or a google.rpc 4xx.

Every route that reads a body goes through ``read_body``/``parse_json`` so that no request,
however malformed, reaches the backend as something it would choke on (and answer 500 to):
oversized bodies, invalid UTF-8, NaN/Infinity (not JSON, and stored as ``null`` by some
encoders), lone UTF-16 surrogates (which cannot be written back as UTF-8, so one stored string
would break every later list of that project) and nesting deeper than any resource has.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import ClientDisconnect, Request

from .backend import ApiError

#: Bodies above this are refused with INVALID_ARGUMENT naming the limit; ``--max-body-mb``
#: changes it.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
#: Deeper than any schema of the API (AgentData is about 12 levels); protobuf's JSON parser
#: stops at 100 too.
MAX_DEPTH = 100

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abAB]", re.ASCII)


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
    except ClientDisconnect:
        raise ApiError("CANCELLED", "the client closed the connection") from None
    return b"".join(chunks)


def _too_large(limit: int) -> ApiError:
    return ApiError(
        "INVALID_ARGUMENT", f"the request body is larger than the emulator's limit of {limit} bytes"
    )


def _refuse_constant(name: str) -> Any:
    raise ApiError("INVALID_ARGUMENT", f"{name} is not a JSON value")


def parse_json(raw: bytes, *, what: str = "the request body") -> Any:
    """The JSON value of ``raw``, or ApiError(INVALID_ARGUMENT) saying what is wrong with it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(
            "INVALID_ARGUMENT", f"{what} is not valid UTF-8 (byte {exc.start})"
        ) from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise _too_deep(what) from None
    except ValueError as exc:
        raise ApiError("INVALID_ARGUMENT", f"{what} is not valid JSON: {exc}") from None
    if _SURROGATE_ESCAPE.search(raw):
        _check_surrogates(value, what)
    if _depth_exceeds(value, MAX_DEPTH):
        raise _too_deep(what)
    return value


def parse_json_object(raw: bytes, *, what: str = "the request body") -> dict[str, Any]:
    if not raw.strip():
        return {}
    value = parse_json(raw, what=what)
    if not isinstance(value, dict):
        raise ApiError(
            "INVALID_ARGUMENT", f"{what} must be a JSON object, not {type(value).__name__}"
        )
    return value


def _too_deep(what: str) -> ApiError:
    return ApiError("INVALID_ARGUMENT", f"{what} is nested more than {MAX_DEPTH} levels deep")


def _check_surrogates(value: Any, what: str) -> None:
    """Refuses a string holding an unpaired UTF-16 surrogate (json.loads lets them through)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"{what} holds an unpaired UTF-16 surrogate escape; strings must be valid "
                    "Unicode",
                ) from None
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
