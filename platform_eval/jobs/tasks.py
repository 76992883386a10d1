"""The high-level jobs: upload an eval set, upload traces as candidates, evaluate."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import logging
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._operations import MetricLike
from ..client import AsyncClient, Client
from ..errors import PlatformEvalError
from ..formats import adk
from ..formats.config import EvalConfig
from ..formats.convert import ConversionReport, case_to_item
from ..formats.load import load_eval_config, load_eval_set
from ..traces import Conversation, MatchReport, load_conversations, match_conversations
from ..types import CandidateResponse, EvaluationItem, EvaluationRun, EvaluationSet
from .manifest import Manifest
from .upload import (
    DEFAULT_CONCURRENCY,
    Failure,
    PendingItem,
    ProgressCallback,
    UploadResult,
    default_manifest_path,
    upload_items_async,
)

_logger = logging.getLogger("platform_eval.jobs")
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
class UploadReport:
    """What an upload job did, filled in for callers who pass one (``report=UploadReport()``)."""

    items: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    resumed: int = 0
    notes: list[str] = field(default_factory=list)
    conversion: ConversionReport = field(default_factory=ConversionReport)
    matches: MatchReport | None = None

    def fill(self, result: UploadResult, conversion: ConversionReport) -> None:
        self.items, self.failures = result.items, result.failures
        self.resumed, self.notes, self.conversion = result.resumed, result.notes, conversion

    def summary(self) -> str:
        lines = [f"{len(self.items)} items uploaded ({self.resumed} already there)"]
        lines += [f"failed: {f.key}: {f.reason}" for f in self.failures]
        lines += self.notes
        if self.matches is not None:
            lines.append(self.matches.summary())
        lines += [
            f"{eval_id}: not carried: {what}"
            for eval_id, whats in self.conversion.not_carried.items()
            for what in whats
        ]
        return "\n".join(lines)


class UploadIncompleteError(PlatformEvalError):
    """Some items could not be created; the others are uploaded and a re-run resumes."""

    def __init__(self, report: UploadReport) -> None:
        self.report = report
        shown = "; ".join(f"{f.key}: {f.reason}" for f in report.failures[:5])
        more = f" (and {len(report.failures) - 5} more)" if len(report.failures) > 5 else ""
        super().__init__(
            f"{len(report.failures)} items failed, {len(report.items)} uploaded; the set was not "
            f"created (re-run to retry, or pass allow_partial=True): {shown}{more}"
        )


def _finish_upload(
    result: UploadResult,
    conversion: ConversionReport,
    report: UploadReport | None,
    matches: MatchReport | None = None,
) -> EvaluationSet:
    out = report if report is not None else UploadReport()
    out.fill(result, conversion)
    out.matches = matches
    for eval_id, whats in conversion.not_carried.items():
        for what in whats:
            _logger.warning("eval case %s: not carried: %s", eval_id, what)
    if matches is not None and (matches.unmatched_cases or matches.unmatched_conversations):
        _logger.warning("%s", matches.summary())
    for failure in result.failures:
        _logger.warning("item %s failed: %s", failure.key, failure.reason)
    if result.evaluation_set is None:
        raise UploadIncompleteError(out)
    return result.evaluation_set


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


@dataclass(frozen=True)
class _Upload:
    """One upload job: which cases, with which candidates, into which set."""

    eval_set: adk.EvalSet
    source: str
    manifest: str | Path | None
    display_name: str
    concurrency: int
    on_progress: ProgressCallback | None
    allow_partial: bool
    report: UploadReport | None
    set_key: str = "eval-set"
    candidates: Mapping[str, list[CandidateResponse]] | None = None
    matches: MatchReport | None = None

    async def __call__(self, client: AsyncClient) -> EvaluationSet:
        conversion = ConversionReport()
        pending = _pending_cases(self.eval_set, conversion, self.candidates)
        result = await upload_items_async(
            client,
            pending,
            manifest=_open_manifest(client, self.source, self.manifest),
            total=len(pending),
            set_key=self.set_key,
            display_name=self.display_name,
            concurrency=self.concurrency,
            on_progress=self.on_progress,
            allow_partial=self.allow_partial,
        )
        return _finish_upload(result, conversion, self.report, self.matches)


def upload_eval_set(
    client: AnyClient,
    source: EvalSetSource,
    *,
    manifest: str | Path | None = None,
    display_name: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: ProgressCallback | None = None,
    allow_partial: bool = False,
    report: UploadReport | None = None,
) -> Any:
    """Uploads an ADK eval set (file or object) as REQUEST items grouped in an evaluation set.

    Returns the EvaluationSet (a coroutine of it with an AsyncClient). Resumable: the manifest
    (by default under ``.platform-eval/manifests/``) records every created item, and a re-run
    finishes the job with each item created exactly once. When items fail, the others stay
    uploaded and UploadIncompleteError lists each failure with its reason (``allow_partial=True``
    makes the set from what was uploaded instead). Pass ``report=UploadReport()`` for the detail.
    """
    eval_set, where = _eval_set(source)
    job = _Upload(
        eval_set,
        where,
        manifest,
        display_name or eval_set.name or eval_set.eval_set_id,
        concurrency,
        on_progress,
        allow_partial,
        report,
    )
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
    report: UploadReport | None = None,
) -> Any:
    """Uploads the eval cases that have traces, each with its traces as candidate responses.

    Returns the EvaluationSet of those items (a coroutine of it with an AsyncClient). Traces are
    matched to cases by ``mapping`` (conversation id -> eval id) or by the first user message;
    cases without a trace and traces without a case are logged and listed in
    ``report.matches``. Resumable and exactly-once like ``upload_eval_set``.
    """
    eval_set, where = _eval_set(eval_set_source)
    conversations: list[Conversation] = []
    for trace in traces:
        conversations.extend(
            [trace] if isinstance(trace, Conversation) else load_conversations(trace)
        )
    matches = match_conversations(eval_set.eval_cases, conversations, mapping)
    job = _Upload(
        eval_set,
        where,
        manifest,
        display_name or f"{eval_set.name or eval_set.eval_set_id} ({candidate})",
        concurrency,
        on_progress,
        allow_partial,
        report,
        set_key=f"traces:{candidate}",
        candidates=_candidates(matches, candidate),
        matches=matches,
    )
    return _dispatch(client, job)


@dataclass
class Evaluation:
    run: EvaluationRun
    results: list[EvaluationItem]
    evaluation_set: EvaluationSet
    upload: UploadReport
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
        report = UploadReport()
        # The manifest is named after the source file, not the EvalSet object parsed from it.
        where_manifest = manifest or default_manifest_path(where, async_client.parent)
        if traces is not None:
            evaluation_set: EvaluationSet = await upload_traces(
                async_client,
                eval_set,
                traces,
                candidate=candidate,
                manifest=where_manifest,
                on_progress=on_progress,
                report=report,
            )
        else:
            evaluation_set = await upload_eval_set(
                async_client,
                eval_set,
                manifest=where_manifest,
                on_progress=on_progress,
                report=report,
            )
        run = await async_client.create_run(evaluation_set=evaluation_set, metrics=chosen)
        run = await async_client.wait_for_run(run, timeout=timeout, poll_interval=poll_interval)
        results = await async_client.get_results(run) if run.evaluation_results else []
        return Evaluation(run, results, evaluation_set, report, thresholds)

    return _dispatch(client, job)


def _dispatch(client: AnyClient, job: Any) -> Any:
    """Runs the job to completion for a sync client; returns the coroutine for an async one."""
    if isinstance(client, AsyncClient):
        coroutine: Coroutine[Any, Any, Any] = job(client)
        return coroutine
    return _run_sync(client, job)
