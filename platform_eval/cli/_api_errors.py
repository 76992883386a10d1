"""An API error as the command's one line of error.

google-api-core's text of an error ends with its details as Python reprs (``[{'@type':
'type.googleapis.com/google.rpc.ErrorInfo', ...}]``), which is for programs. The line here gives
the HTTP code, the status and the server's message, then what the details say to a person: the
fields a request got wrong, the quota or precondition that failed, when to retry, where help is.
Machine codes (ErrorInfo's reason and domain) stay out; ``--debug`` prints the exception whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from google.api_core.exceptions import GoogleAPICallError

_TYPE_PREFIX = "type.googleapis.com/google.rpc."


def api_error_text(exc: GoogleAPICallError) -> str:
    status = getattr(exc, "rpc_status", None)
    if not isinstance(status, str) and exc.grpc_status_code is not None:
        status = exc.grpc_status_code.name
    head = " ".join(str(part) for part in (exc.code, status) if part)
    said = list(_said(exc.details or []))
    text = f"{head}: {exc.message}" if head else str(exc.message)
    return "; ".join([text, *said])


def _said(details: list[Any]) -> Iterator[str]:
    for detail in details:
        if not isinstance(detail, dict):
            continue
        kind = str(detail.get("@type", "")).removeprefix(_TYPE_PREFIX)
        if kind == "BadRequest":
            for violation in _dicts(detail.get("fieldViolations")):
                yield f"{violation.get('field', '?')}: {violation.get('description', '')}"
        elif kind in ("QuotaFailure", "PreconditionFailure"):
            for violation in _dicts(detail.get("violations")):
                if description := violation.get("description"):
                    yield str(description)
        elif kind == "RetryInfo" and (delay := detail.get("retryDelay")):
            yield f"retry after {delay}"
        elif kind == "Help":
            for link in _dicts(detail.get("links")):
                if url := link.get("url"):
                    about = link.get("description")
                    yield f"{about}: {url}" if about else str(url)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
