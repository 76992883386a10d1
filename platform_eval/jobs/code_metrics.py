"""An agents-cli config's local code metrics (``custom_function`` / ``custom_function_file``),
computed by ``evaluate`` over the request items it uploaded, as agents-cli's ``eval grade``
computes them: in this process, on the user's own code.

Their scores come back as RESULT items beside the run's own (``Evaluation.results``), so that
``fetch_results`` reads both alike. They are kept with the run (``keep_code_results``): each a
RESULT item whose payload is a Cloud Storage object, as the service takes a RESULT item from a
client, all of them in a set the run's metadata names, so that ``results RUN`` later shows the
rows ``run`` printed. Where no Cloud Storage prefix is known (the service, with none given),
they are not kept, and the run says so.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..client import AsyncClient
from ..formats._problems import FormatError
from ..formats.config import EvalConfig
from ..metrics import code_metrics, evaluate_request
from ..metrics.code_metrics import CodeFunction
from ..types import (
    CandidateResult,
    EvaluationItem,
    EvaluationItemType,
    EvaluationRequest,
    EvaluationSet,
)
from ..types.items import EvaluationResult

#: How many request items are read at once.
CONCURRENCY = 16

_logger = logging.getLogger("platform_eval.jobs")


def functions_of(config: EvalConfig | None) -> dict[str, CodeFunction]:
    """The config's code metrics, each the user's ``evaluate``; a file that is missing, does
    not parse or defines no ``evaluate`` is a FormatError here, before anything is uploaded."""
    if config is None or not config.code_metrics:
        return {}
    problems = config.code_problems()
    if problems:
        raise FormatError(problems)
    return {
        name: code_metrics.load_function(name, source.source, source.origin)
        for name, source in config.code_metrics.items()
    }


async def code_results(
    client: AsyncClient,
    evaluation_set: EvaluationSet,
    case_ids: Mapping[str, str],
    functions: Mapping[str, CodeFunction],
) -> list[EvaluationItem]:
    """One result item per request item of the set, with every function's score for each of
    its candidates. The request items are read back from the target: what is scored is what
    was uploaded."""
    limit = asyncio.Semaphore(CONCURRENCY)
    specs = [code_metrics.local_spec(name, function) for name, function in functions.items()]

    async def scored(name: str) -> EvaluationItem | None:
        async with limit:
            item = await client.get_item(name)
        request = item.evaluation_request
        if request is None:
            return None
        case = case_ids.get(name) or _case_of(item)
        # The user's code may be slow (agents-cli's default asks a model): off the loop.
        results = await asyncio.to_thread(evaluate_request, specs, request, case=case)
        return _result_item(case, name, request, results)

    found = await asyncio.gather(*(scored(n) for n in evaluation_set.evaluation_items or []))
    return [item for item in found if item is not None]


def not_evaluated_results(
    not_evaluated: Mapping[str, Mapping[str, str]], functions: Mapping[str, CodeFunction]
) -> list[EvaluationItem]:
    """For the candidates the agent failed on (never uploaded), each code metric NOT_EVALUATED
    with the failure: where no run records them, these items do."""
    return [
        _result_item(
            case,
            None,
            None,
            [
                CandidateResult(candidate=candidate, metric=name, explanation=why)
                for candidate, why in candidates.items()
                for name in functions
            ],
        )
        for case, candidates in not_evaluated.items()
    ]


def _result_item(
    case: str,
    request_name: str | None,
    request: EvaluationRequest | None,
    results: list[CandidateResult],
) -> EvaluationItem:
    return EvaluationItem(
        display_name=case,
        metadata={"evalCaseId": case},
        evaluation_item_type=EvaluationItemType.RESULT,
        evaluation_response=EvaluationResult(
            evaluation_request=request_name,
            request=request,
            candidate_results=results,
        ),
    )


def _case_of(item: EvaluationItem) -> str:
    metadata = item.metadata if isinstance(item.metadata, dict) else {}
    case = metadata.get("evalCaseId")
    return str(case) if isinstance(case, str) and case else (item.name or "?").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class KeptResults:
    """The code metrics' RESULT items as stored (named), and the set that holds them."""

    items: list[EvaluationItem]
    set_name: str


async def keep_code_results(
    client: AsyncClient,
    items: Sequence[EvaluationItem],
    evaluation_set: EvaluationSet,
    destination: str | None,
) -> KeptResults | None:
    """The code metrics' results stored on the target (each payload an object under
    ``destination``, then the item, then a set of them); None, said once, where they cannot
    be kept: no ``gs://`` prefix, or the target refused."""
    if destination is None:
        _logger.warning(
            "the local code metrics' results are not kept with the run (no Cloud Storage prefix "
            "to write them under: give one, bulk_import='gs://...'): `results RUN` will not "
            "show them"
        )
        return None
    from google.api_core import exceptions as core

    digest = hashlib.sha256((evaluation_set.name or "").encode()).hexdigest()[:16]
    limit = asyncio.Semaphore(CONCURRENCY)

    async def kept(index: int, item: EvaluationItem) -> EvaluationItem:
        uri = f"{destination.rstrip('/')}/code-results/{digest}/{index:06d}.json"
        async with limit:
            made = await client.create_item(item, gcs_uri=uri)
        # As returned here: the payload read back in, as get_item reads it.
        return made.model_copy(update={"evaluation_response": item.evaluation_response})

    try:
        stored = await asyncio.gather(*(kept(n, item) for n, item in enumerate(items)))
        holder = await client.create_set(
            display_name=f"{evaluation_set.display_name or 'evaluation set'} (code metrics)",
            items=[item.name for item in stored],
        )
    except core.GoogleAPICallError as exc:
        _logger.warning(
            "the local code metrics' results could not be kept with the run (%s): `results "
            "RUN` will not show them",
            exc,
        )
        return None
    assert holder.name is not None
    return KeptResults(list(stored), holder.name)
