"""An API error is one line a person reads: code, status, the server's message, and what its
details say in words; never the details' Python reprs (``cli._api_errors``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sockets import answering

from platform_eval.cli import main

#: An error as the service writes one (AIP-193), with every kind of detail the line reads and
#: two it leaves to --debug.
REFUSAL = {
    "error": {
        "code": 400,
        "message": "Request contains an invalid argument.",
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "BAD_FIELD",
                "domain": "aiplatform.googleapis.com",
            },
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [
                    {"field": "pageSize", "description": "must be at most 1000"},
                    "not a violation",
                ],
            },
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"},
            {
                "@type": "type.googleapis.com/google.rpc.Help",
                "links": [{"description": "Quotas", "url": "https://cloud.google.com/q"}],
            },
            {"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "stack"},
        ],
    }
}


def test_a_not_found_is_its_code_status_and_message(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-q", "results", "999"]) == 2
    err = capsys.readouterr().err
    run = "projects/local-project/locations/us-central1/evaluationRuns/999"
    assert err == f"platform-eval: error: 404 NOT_FOUND: {run} not found [GET {run}]\n"


def test_the_details_are_said_in_words_and_their_reprs_left_out(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = json.dumps(REFUSAL).encode()
    with answering(400, "application/json; charset=UTF-8", body) as endpoint:
        code = main(["-q", "--endpoint", endpoint, "runs", "list"])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith(
        "platform-eval: error: 400 INVALID_ARGUMENT: Request contains an invalid argument. [GET "
    )
    assert line.endswith(
        "; pageSize: must be at most 1000; retry after 30s; Quotas: https://cloud.google.com/q"
    )
    for left_out in ("@type", "BAD_FIELD", "DebugInfo", "stack", "not a violation"):
        assert left_out not in line
