"""The high-level jobs: upload an eval set, upload traces as candidates, evaluate."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .._operations import MetricLike
from ..client import AsyncClient, Client
from ..formats import adk
from ..formats.config import EvalConfig
from ..formats.convert import ConversionReport, case_to_item
from ..formats.load import load_eval_config, load_eval_set
from ..traces import Conversation, MatchReport, load_conversations, match_conversations
from ..types import CandidateResponse, EvaluationItem, EvaluationRun
from .manifest import Manifest
from .upload import (
    DEFAULT_CONCURRENCY,
    PendingItem,
    ProgressCallback,
    UploadResult,
    default_manifest_path,
    upload_items_async,
)

T = TypeVar("T")
AnyClient = Client | AsyncClient
EvalSetSource = str | Path | adk.EvalSet


def _eval_set(source: EvalSetSource) -> tuple[adk.EvalSet, str]:
    if isinstance(source, adk.EvalSet):
        return source, f"eval-set:{source.eval_set_id}"
    return load_eval_set(source), str(source)


def _run_sync(client: Client, job: Any) -> Any:
    async def main() -> Any:
        async_client = client.to_async()
        try:
            return await job(async_client)
        finally:
            await async_client.close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    # Called from inside an event loop (a notebook, an async app): run on a thread of its own.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()


def _open_manifest(client: AnyClient, source: str, manifest: str | Path | None) -> Manifest:
    path = Path(manifest) if manifest else default_manifest_path(source, client.parent)
    return Manifest(path, parent=client.parent, source=source)


@dataclass
class EvalSetUpload:
    upload: UploadResult
    report: ConversionReport
    matches: MatchReport | None = None


def _pending_cases(
    eval_set: adk.EvalSet,
    report: ConversionReport,
    candidates: Mapping[str, list[CandidateResponse]] | None,
) -> list[PendingItem]:
    pending: list[PendingItem] = []
    for eval_case in eval_set.eval_cases:
        if candidates is not None and eval_case.eval_id not in candidates:
            continue

        def build(case: adk.EvalCase = eval_case) -> EvaluationItem:
            # Converted when a worker takes it: memory holds the parsed file, not every item.
            item, case_report = case_to_item(case, eval_set.eval_set_id)
            report.cases.append(case_report)
            if candidates is not None and item.evaluation_request is not None:
                request = item.evaluation_request.model_copy(
                    update={"candidate_responses": candidates[case.eval_id]}
                )
                item = item.model_copy(update={"evaluation_request": request})
            return item

        key = f"{eval_set.eval_set_id}/{eval_case.eval_id}"
        if candidates is not None:
            # The same case with other traces is another item: the key follows the content.
            key += f"@{_fingerprint(candidates[eval_case.eval_id])}"
        pending.append((key, build))
    return pending


def _fingerprint(candidates: list[CandidateResponse]) -> str:
    digest = hashlib.sha256()
    for candidate in candidates:
        digest.update(json.dumps(candidate.to_wire(), sort_keys=True).encode())
    return digest.hexdigest()[:16]


async def _upload(
    client: AsyncClient,
    eval_set: adk.EvalSet,
    source: str,
    *,
    manifest: str | Path | None,
    display_name: str | None,
    concurrency: int,
    on_progress: ProgressCallback | None,
    allow_partial: bool,
    candidates: Mapping[str, list[CandidateResponse]] | None = None,
    set_key: str = "eval-set",
) -> tuple[UploadResult, ConversionReport]:
    report = ConversionReport()
    pending = _pending_cases(eval_set, report, candidates)
    result = await upload_items_async(
        client,
        pending,
        manifest=_open_manifest(client, source, manifest),
        total=len(pending),
        set_key=set_key,
        display_name=display_name or eval_set.name or eval_set.eval_set_id,
        concurrency=concurrency,
        on_progress=on_progress,
        allow_partial=allow_partial,
    )
    return result, report


def upload_eval_set(
    client: AnyClient,
    source: EvalSetSource,
    *,
    manifest: str | Path | None = None,
    display_name: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: ProgressCallback | None = None,
    allow_partial: bool = False,
) -> Any:
    """Uploads an ADK eval set (file or object) as REQUEST items grouped in an evaluation set.

    Resumable: the manifest (by default under ``.platform-eval/manifests/``) records every
    created item, and a re-run finishes the job with each item created exactly once. Returns an
    ``EvalSetUpload`` (awaitable with an AsyncClient).
    """
    eval_set, where = _eval_set(source)

    async def job(async_client: AsyncClient) -> EvalSetUpload:
        result, report = await _upload(
            async_client,
            eval_set,
            where,
            manifest=manifest,
            display_name=display_name,
            concurrency=concurrency,
            on_progress=on_progress,
            allow_partial=allow_partial,
        )
        return EvalSetUpload(result, report)

    return _dispatch(client, job)


def _candidates(matches: MatchReport, candidate: str) -> dict[str, list[CandidateResponse]]:
    grouped: dict[str, list[Conversation]] = {}
    for match in matches.matches:
        grouped.setdefault(match.eval_id, []).append(match.conversation)
    out: dict[str, list[CandidateResponse]] = {}
    for eval_id, conversations in grouped.items():
        names = (
            [candidate]
            if len(conversations) == 1
            else [f"{candidate}#{i + 1}" for i in range(len(conversations))]
        )
        out[eval_id] = [
            CandidateResponse(candidate=name, agent_data=c.agent_data)
            for name, c in zip(names, conversations, strict=True)
        ]
    return out


def upload_traces(
    client: AnyClient,
    eval_set_source: EvalSetSource,
    traces: Sequence[str | Path | Conversation],
    *,
    candidate: str = "agent",
    mapping: Mapping[str, str] | None = None,
    manifest: str | Path | None = None,
    display_name: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: ProgressCallback | None = None,
    allow_partial: bool = False,
) -> Any:
    """Uploads the eval cases that have traces, each with its traces as candidate responses.

    Traces are matched to cases by ``mapping`` (conversation id -> eval id) or by the first user
    message; the match report lists cases without a trace and traces without a case.
    """
    eval_set, where = _eval_set(eval_set_source)
    conversations: list[Conversation] = []
    for trace in traces:
        conversations.extend(
            [trace] if isinstance(trace, Conversation) else load_conversations(trace)
        )
    matches = match_conversations(eval_set.eval_cases, conversations, mapping)
    candidates = _candidates(matches, candidate)

    async def job(async_client: AsyncClient) -> EvalSetUpload:
        result, report = await _upload(
            async_client,
            eval_set,
            where,
            manifest=manifest,
            display_name=display_name or f"{eval_set.name or eval_set.eval_set_id} ({candidate})",
            concurrency=concurrency,
            on_progress=on_progress,
            allow_partial=allow_partial,
            candidates=candidates,
            set_key=f"traces:{candidate}",
        )
        return EvalSetUpload(result, report, matches)

    return _dispatch(client, job)


@dataclass
class Evaluation:
    run: EvaluationRun
    results: list[EvaluationItem]
    upload: EvalSetUpload
    thresholds: dict[str, float] = field(default_factory=dict)


def _metrics(
    metrics: Sequence[MetricLike] | None, config: EvalConfig | str | Path | None
) -> tuple[list[MetricLike], dict[str, float]]:
    loaded = load_eval_config(config) if isinstance(config, str | Path) else config
    chosen: list[MetricLike] = list(metrics or [])
    thresholds: dict[str, float] = {}
    if loaded is not None:
        if not chosen:
            chosen = list(loaded.run_metrics())
        thresholds = loaded.thresholds()
    if not chosen:
        raise ValueError("evaluate needs metrics=[...] or a config with criteria")
    return chosen, thresholds


def evaluate(
    client: AnyClient,
    eval_set_source: EvalSetSource,
    *,
    traces: Sequence[str | Path | Conversation] | None = None,
    metrics: Sequence[MetricLike] | None = None,
    config: EvalConfig | str | Path | None = None,
    candidate: str = "agent",
    manifest: str | Path | None = None,
    timeout: float | None = None,
    poll_interval: float = 1.0,
    on_progress: ProgressCallback | None = None,
) -> Any:
    """Uploads (with traces as candidates when given), starts a run, waits, returns results."""
    chosen, thresholds = _metrics(metrics, config)
    eval_set, where = _eval_set(eval_set_source)

    async def job(async_client: AsyncClient) -> Evaluation:
        if traces is not None:
            upload: EvalSetUpload = await upload_traces(
                async_client,
                eval_set,
                traces,
                candidate=candidate,
                manifest=manifest or default_manifest_path(where, async_client.parent),
                on_progress=on_progress,
            )
        else:
            upload = await upload_eval_set(
                async_client,
                eval_set,
                manifest=manifest or default_manifest_path(where, async_client.parent),
                on_progress=on_progress,
            )
        if upload.upload.evaluation_set is None:
            failures = "; ".join(f"{f.key}: {f.reason}" for f in upload.upload.failures[:5])
            raise RuntimeError(f"the upload did not complete, so no run was started: {failures}")
        run = await async_client.create_run(
            evaluation_set=upload.upload.evaluation_set, metrics=chosen
        )
        run = await async_client.wait_for_run(run, timeout=timeout, poll_interval=poll_interval)
        results = await async_client.get_results(run) if run.evaluation_results else []
        return Evaluation(run, results, upload, thresholds)

    return _dispatch(client, job)


def _dispatch(client: AnyClient, job: Any) -> Any:
    """Runs the job to completion for a sync client; returns the coroutine for an async one."""
    if isinstance(client, AsyncClient):
        coroutine: Coroutine[Any, Any, Any] = job(client)
        return coroutine
    return _run_sync(client, job)
