"""pytest plugin: the ``platform_eval`` fixture evaluates eval sets in your tests.

    def test_agent(platform_eval):
        results = platform_eval.evaluate(
            "tests/eval/evalsets/basic.evalset.json",
            traces=["traces/basic.otlp.json"],
            config="tests/eval/eval_config.json",
        )
        results.assert_passed()  # lists the failing cases, metrics and verdicts

The target is the one the command line would pick: ``PLATFORM_EVAL_EMULATOR_HOST`` for a running
emulator, ``GOOGLE_CLOUD_PROJECT`` for the real service, else an in-memory emulator started once
for the session. Imports are lazy, so the plugin costs nothing to test runs that do not use it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .client import Client
    from .results import RunResults


class PlatformEval:
    """What the ``platform_eval`` fixture gives a test."""

    def __init__(self, client: Client, manifests: Path) -> None:
        self.client = client
        self._manifests = manifests

    def evaluate(
        self,
        eval_set: str | Path | Any,
        *,
        traces: Sequence[str | Path] | None = None,
        config: str | Path | None = None,
        metrics: Sequence[Any] | None = None,
        thresholds: Mapping[str, float] | None = None,
        candidate: str = "agent",
    ) -> RunResults:
        """Uploads, runs and returns the results, judged by the config's and these thresholds."""
        from . import jobs
        from .results import fetch_results

        evaluation = jobs.evaluate(
            self.client,
            eval_set,
            traces=traces,
            config=config,
            metrics=metrics,
            candidate=candidate,
            manifest=self._manifests / f"{abs(hash((str(eval_set), candidate)))}.jsonl",
            poll_interval=0.2,
        )
        judged = {**evaluation.thresholds, **(thresholds or {})}
        return fetch_results(  # type: ignore[no-any-return]
            self.client, evaluation.run, thresholds=judged, items=evaluation.results
        )


@pytest.fixture(scope="session")
def _platform_eval_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    from .client import Client

    if os.environ.get("PLATFORM_EVAL_EMULATOR_HOST") or os.environ.get("GOOGLE_CLOUD_PROJECT"):
        with Client() as client:
            yield client
        return
    from .emulator import Emulator

    with Emulator() as emulator, emulator.client() as client:
        yield client


@pytest.fixture
def platform_eval(
    _platform_eval_client: Client, tmp_path_factory: pytest.TempPathFactory
) -> PlatformEval:
    """Evaluates eval sets against the session's target: ``platform_eval.evaluate(...)``."""
    return PlatformEval(_platform_eval_client, tmp_path_factory.mktemp("platform-eval"))
