"""Request bodies the emulator accepts: bounded, strict JSON, or a google.rpc 4xx.

Every route that reads a body goes through ``read_body``/``parse_json`` so that no request,
however malformed, reaches the backend as something it would choke on (and answer 500 to):
oversized bodies, invalid UTF-8, NaN/Infinity (not JSON, and stored as ``null`` by some
encoders), numbers beyond a double's range (``1e999``, which Python reads as infinity), lone
UTF-16 surrogates (which cannot be written back as UTF-8), nesting deeper than any resource has.
One stored NaN or surrogate would break every later list of that project.
"""

from __future__ import annotations

import json
import math
from typing import Any

from starlette.requests import ClientDisconnect, Request

from .._json_limits import limit_problem, non_finite_path, too_deep
from .backend import ApiError
from .limits import Limits


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
        "INVALID_ARGUMENT",
        f"the request body is larger than the emulator's limit of {limit} bytes "
        "(emulator start --max-body-mb)",
    )


class _NonFiniteError(Exception):
    """A number JSON has no form for, raised from inside the decoder (which knows no path),
    so that its path is looked for only when there is one to find."""


def _refuse_constant(name: str) -> Any:
    raise _NonFiniteError(f"{name} is not a JSON value (JSON has no NaN or infinity)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NonFiniteError(f"{text} is beyond a double's range (JSON has no infinity)")
    return value


#: One decoder for every body: json.loads with an option builds a new one per call.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
#: Reads a body already refused for a non-finite number, to say where that number is.
_LENIENT = json.JSONDecoder()


def parse_json(raw: bytes, *, limits: Limits, what: str = "the request body") -> Any:
    """The JSON value of ``raw``, or ApiError(INVALID_ARGUMENT) saying what is wrong with it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(
            "INVALID_ARGUMENT", f"{what} is not valid UTF-8 (byte {exc.start})"
        ) from None
    # Counted in C before anything is built, since parsed JSON takes some 150 bytes a value
    # (commas inside strings count too: an upper bound).
    values = limits.json_values
    if len(text) > values and text.count(",") + text.count("{") + text.count("[") > values:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"{what} holds more than {values} values; no resource has that many "
            "(emulator start --max-json-values)",
        )
    try:
        value = _DECODER.decode(text)
        problem = limit_problem(value, text, limits.json_depth)
    except RecursionError:
        problem = "$", too_deep(limits.json_depth)
    except _NonFiniteError as number:
        problem = _non_finite_path(text), str(number)
    except ValueError as exc:
        raise ApiError("INVALID_ARGUMENT", f"{what} is not valid JSON: {exc}") from None
    if problem is not None:
        where, message = problem
        raise ApiError("INVALID_ARGUMENT", f"{what} at {where}: {message}")
    return value


def _non_finite_path(text: str) -> str:
    where = non_finite_path(_LENIENT.decode(text))
    return where if where is not None else "$"


def parse_json_object(
    raw: bytes, *, limits: Limits, what: str = "the request body"
) -> dict[str, Any]:
    if not raw.strip():
        return {}
    value = parse_json(raw, what=what, limits=limits)
    if not isinstance(value, dict):
        raise ApiError(
            "INVALID_ARGUMENT", f"{what} must be a JSON object, not {type(value).__name__}"
        )
    return value
