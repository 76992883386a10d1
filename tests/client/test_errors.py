"""Every error class the client raises, from real emulator responses where one can be provoked."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from factories import request_item

from platform_eval import errors
from platform_eval.emulator import Emulator

ERROR_BODIES = [
    (400, "INVALID_ARGUMENT", errors.InvalidArgument),
    (400, "FAILED_PRECONDITION", errors.FailedPrecondition),
    (400, "OUT_OF_RANGE", __import__("google.api_core.exceptions").api_core.exceptions.OutOfRange),
    (401, "UNAUTHENTICATED", errors.Unauthenticated),
    (403, "PERMISSION_DENIED", errors.PermissionDenied),
    (404, "NOT_FOUND", errors.NotFound),
    (409, "ALREADY_EXISTS", errors.AlreadyExists),
    (409, "ABORTED", __import__("google.api_core.exceptions").api_core.exceptions.Aborted),
    (429, "RESOURCE_EXHAUSTED", errors.ResourceExhausted),
    (500, "INTERNAL", errors.InternalServerError),
    (
        501,
        "UNIMPLEMENTED",
        __import__("google.api_core.exceptions").api_core.exceptions.MethodNotImplemented,
    ),
    (503, "UNAVAILABLE", errors.ServiceUnavailable),
    (504, "DEADLINE_EXCEEDED", errors.DeadlineExceeded),
]


@pytest.mark.parametrize(
    ("code", "status", "cls"), ERROR_BODIES, ids=[s for _, s, _ in ERROR_BODIES]
)
def test_rpc_status_selects_the_class(code: int, status: str, cls: type[Exception]) -> None:
    body = {
        "error": {
            "code": code,
            "message": "the server said so",
            "status": status,
            "details": [{"@type": "x"}],
        }
    }
    exc = errors.from_response(
        code, body, method="GET", resource="projects/p/locations/l/evaluationItems/1"
    )
    assert type(exc) is cls
    assert isinstance(exc, errors.GoogleAPICallError)
    assert "the server said so" in str(exc)
    assert "projects/p/locations/l/evaluationItems/1" in str(exc)
    assert exc.details == [{"@type": "x"}]
    assert exc.code == code


def test_http_status_is_used_when_the_body_is_not_google_rpc() -> None:
    exc = errors.from_response(502, "<html>Bad Gateway</html>", method="GET", resource=None)
    assert isinstance(exc, errors.GoogleAPICallError) and exc.code == 502
    assert "Bad Gateway" in str(exc)
    assert isinstance(
        errors.from_response(418, {}, method="GET", resource=None), errors.GoogleAPICallError
    )


def test_status_classes_keep_the_api_core_hierarchy() -> None:
    assert issubclass(errors.InvalidArgument, errors.BadRequest)
    assert issubclass(errors.AlreadyExists, errors.Conflict)
    assert issubclass(errors.ResourceExhausted, errors.TooManyRequests)
    assert issubclass(errors.APITimeoutError, errors.APIConnectionError)
    assert issubclass(errors.APIConnectionError, errors.GoogleAPIError)
    assert issubclass(errors.WaitTimeoutError, TimeoutError)


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (401, errors.Unauthenticated),
        (403, errors.PermissionDenied),
        (409, __import__("google.api_core.exceptions").api_core.exceptions.Aborted),
        (500, errors.InternalServerError),
    ],
)
def test_injected_http_errors_arrive_typed(
    client: Any, emulator: Emulator, status: int, cls: type[Exception]
) -> None:
    emulator.inject_fault(path="evaluationItems", method="POST", status=status, times=5)
    with pytest.raises(cls, match="injected fault"):
        client.create_item(request_item("x"))


def test_real_emulator_errors_name_the_resource(client: Any) -> None:
    with pytest.raises(errors.NotFound) as caught:
        client.get_run("4242")
    assert f"{client.parent}/evaluationRuns/4242" in str(caught.value)
    assert caught.value.rpc_status == "NOT_FOUND"


def test_emulator_error_body_is_google_rpc(emulator: Emulator) -> None:
    response = httpx.get(f"{emulator.url}/v1beta1/projects/p/locations/l/evaluationItems/77")
    assert response.status_code == 404
    assert response.json() == {
        "error": {
            "code": 404,
            "message": "projects/p/locations/l/evaluationItems/77 not found",
            "status": "NOT_FOUND",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "NOT_FOUND",
                    "domain": "aiplatform.googleapis.com",
                }
            ],
        }
    }
