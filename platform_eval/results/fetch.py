"""Reads a finished run's results from the target into RunResults."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, overload

from google.api_core import exceptions as core

from .._sync import run_or_defer
from ..client import AsyncClient, Client
from ..errors import ConfigurationError
from ..metrics.thresholds import threshold_problem
from ..types import EvaluationItem, EvaluationRun
from .model import RunResults, build, eval_case_id

#: How many request items are read at once to name the eval case of each result.
CONCURRENCY = 16

_logger = logging.getLogger("platform_eval.results")


def _check_recorded(run: EvaluationRun, given: Mapping[str, float]) -> None:
    """A threshold recorded with the run that cannot judge anything (not a number, outside its
    metric's range: the run's metadata edited by hand) is an error, never dropped or used."""
    for metric, value in run.recorded_threshold_entries.items():
        problem = None if metric in given else threshold_problem(metric, value)
        if problem is not None:
            raise ConfigurationError(
                f"run {run.name}: the threshold recorded for {metric} ({value!r}) cannot be "
                f"used: {problem}; give one (--threshold {metric}=X) or judge without the "
                "recorded ones (--ignore-run-thresholds)"
            )


async def fetch_results_async(
    client: AsyncClient,
    run: Any,
    *,
    thresholds: Mapping[str, float] | None = None,
    items: Sequence[EvaluationItem] | None = None,
    recorded: bool = True,
    case_ids: Mapping[str, str] | None = None,
) -> RunResults:
    current: EvaluationRun | None = None
    if run is None:
        # No run was started (every metric a local code metric): the items are the results.
        if items is None:
            raise ValueError("fetch_results(client, None) needs items=: there is no run to read")
    else:
        current = run if isinstance(run, EvaluationRun) and run.done else await client.get_run(run)
    if recorded and current is not None:
        _check_recorded(current, thresholds or {})
        thresholds = {**current.recorded_thresholds, **(thresholds or {})}
    if items is None:
        assert current is not None
        items = await client.get_results(current) + await _code_results(client, current)
    known = dict(case_ids or {})
    requests: set[str] = set()
    for item in items:
        response = item.evaluation_response
        if response and response.evaluation_request and response.evaluation_request not in known:
            requests.add(response.evaluation_request)
    limit = asyncio.Semaphore(CONCURRENCY)

    async def case_of(name: str) -> tuple[str, str | None]:
        async with limit:
            try:
                request = await client.get_item(name, read_payload=False)
                return name, eval_case_id(request) or request.display_name
            except core.NotFound:  # a deleted request item: the result still names its id
                return name, None

    found = await asyncio.gather(*(case_of(n) for n in requests))
    known.update((name, case) for name, case in found if case)
    results = build(current, items, case_ids=known, thresholds=thresholds)
    if current is not None and client.is_emulator:
        # What judging the run cost, kept with it by the emulator (the service keeps none).
        results.judge = await client.run_judge_usage(current)
    return results


async def _code_results(client: AsyncClient, run: EvaluationRun) -> list[EvaluationItem]:
    """The local code metrics' RESULT items kept with the run (``jobs.keep_code_results``), in
    the order of their set; none when the run has none."""
    set_name = run.recorded_code_results
    if set_name is None:
        return []
    try:
        kept = await client.get_set(set_name)
    except core.NotFound:
        _logger.warning("%s names its code metrics' results %s, which is gone", run.name, set_name)
        return []
    limit = asyncio.Semaphore(CONCURRENCY)

    async def read(name: str) -> EvaluationItem:
        async with limit:
            return await client.get_item(name)

    return list(await asyncio.gather(*(read(n) for n in kept.evaluation_items or [])))


@overload
def fetch_results(
    client: Client,
    run: Any,
    *,
    thresholds: Mapping[str, float] | None = None,
    items: Sequence[EvaluationItem] | None = None,
    recorded: bool = True,
    case_ids: Mapping[str, str] | None = None,
) -> RunResults: ...


@overload
def fetch_results(
    client: AsyncClient,
    run: Any,
    *,
    thresholds: Mapping[str, float] | None = None,
    items: Sequence[EvaluationItem] | None = None,
    recorded: bool = True,
    case_ids: Mapping[str, str] | None = None,
) -> Coroutine[Any, Any, RunResults]: ...


def fetch_results(
    client: Client | AsyncClient,
    run: Any,
    *,
    thresholds: Mapping[str, float] | None = None,
    items: Sequence[EvaluationItem] | None = None,
    recorded: bool = True,
    case_ids: Mapping[str, str] | None = None,
) -> Any:
    """RunResults of a finished run (a coroutine of them with an AsyncClient).

    ``run`` is None, with ``items``, for an evaluation that started no run (``Evaluation.run``
    when every metric was a local code metric).

    Each row names its eval case (from the request item's ``evalCaseId``), candidate and
    metric, with the score, the threshold, pass or fail, the explanation and the rubric
    verdicts. The thresholds are those recorded with the run when it was started (unless
    ``recorded=False``), each replaced by the one ``thresholds`` gives for the same metric.
    Pass ``items`` when the run's RESULT items were already read (``jobs.evaluate`` returns
    them), so they are not read again, and ``case_ids`` (request item name -> eval case id) when
    the upload told which case each item holds (``Evaluation.upload.case_ids``), so that those
    request items are not read one by one.
    """
    return run_or_defer(
        client,
        lambda c: fetch_results_async(
            c, run, thresholds=thresholds, items=items, recorded=recorded, case_ids=case_ids
        ),
    )
