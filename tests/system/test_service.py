"""Against the real service. Skipped unless PLATFORM_EVAL_SYSTEM_TESTS=1 and a project is set.

    PLATFORM_EVAL_SYSTEM_TESTS=1 GOOGLE_CLOUD_PROJECT=my-project nox -s system

Uses Application Default Credentials; creates an item, a set and a run, waits, reads the
results, and deletes what it made.
"""

from __future__ import annotations

import contextlib
import os
import uuid

import pytest

from platform_eval import Client, errors
from platform_eval import types as t

pytestmark = [
    pytest.mark.system,
    pytest.mark.skipif(
        os.environ.get("PLATFORM_EVAL_SYSTEM_TESTS") != "1"
        or not os.environ.get("GOOGLE_CLOUD_PROJECT"),
        reason="needs PLATFORM_EVAL_SYSTEM_TESTS=1, GOOGLE_CLOUD_PROJECT and credentials",
    ),
]


def test_round_trip_on_the_real_service() -> None:
    suffix = uuid.uuid4().hex[:8]
    with Client() as client:
        assert not client.is_emulator
        item = client.create_item(
            t.EvaluationItem(
                display_name=f"platform-eval-system-{suffix}",
                evaluation_item_type=t.EvaluationItemType.REQUEST,
                evaluation_request=t.EvaluationRequest(
                    prompt=t.EvaluationPrompt(text="What is the capital of France?"),
                    golden_response=t.CandidateResponse(text="Paris"),
                    candidate_responses=[
                        t.CandidateResponse(candidate="system-test", text="Paris")
                    ],
                ),
            )
        )
        try:
            evaluation_set = client.create_set(
                display_name=f"platform-eval-system-{suffix}", items=[item]
            )
            run = client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
            done = client.wait_for_run(run, timeout=1800, poll_interval=10)
            assert done.state == t.EvaluationRunState.SUCCEEDED, done.error
            results = client.get_results(done)
            assert results and results[0].evaluation_response is not None
        finally:
            with contextlib.suppress(errors.NotFound):
                client.delete_item(item)
