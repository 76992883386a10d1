"""mypy sees the real return types of the high-level functions (jobs.evaluate,
upload_eval_set, upload_traces, results.fetch_results) for both clients, and a misspelled
option is a type error: tests/typing/public_types.py, checked here by mypy itself."""

from __future__ import annotations

import pytest
from paths import TESTS

pytestmark = pytest.mark.slow


def test_the_high_level_functions_have_real_return_types() -> None:
    api = pytest.importorskip("mypy.api")
    checked = TESTS / "typing" / "public_types.py"
    out, err, status = api.run(
        [
            str(checked),
            "--strict",
            "--warn-unused-ignores",
            "--no-error-summary",
            "--follow-imports=silent",
        ]
    )
    assert status == 0, out + err
