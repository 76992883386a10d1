"""Bulk, resumable, exactly-once upload of evaluation items and the set that groups them.

Items are created by a bounded pool of async workers that pull from a lazy iterator, so memory
does not grow with the number of items beyond the input itself. Each created item is written
to the manifest at once; a re-run skips what the manifest has, recovers creates whose answers
were lost (same request id, and a label listing), and retries what failed before.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from google.api_core import exceptions as core

from ..client import AsyncClient
from ..errors import APIConnectionError
from ..types import EvaluationItem, EvaluationSet
from .manifest import Manifest, key_label

#: Label with the job id on every uploaded item, to find them again after a crash.
JOB_LABEL = "platform-eval-job"
KEY_LABEL = "platform-eval-key"
DEFAULT_CONCURRENCY = 16


@dataclass(frozen=True)
class Progress:
    done: int
    failed: int
    total: int
    skipped: int = 0


@dataclass(frozen=True)
class Failure:
    key: str
    reason: str


@dataclass
class UploadResult:
    evaluation_set: EvaluationSet | None
    items: list[str]
    failures: list[Failure] = field(default_factory=list)
    resumed: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures and self.evaluation_set is not None


ProgressCallback = Callable[[Progress], None]
PendingItem = tuple[str, Callable[[], EvaluationItem]]


def default_manifest_path(source: str, parent: str) -> Path:
    digest = hashlib.sha256(f"{parent}|{Path(source).resolve()}".encode()).hexdigest()[:16]
    return Path(".platform-eval") / "manifests" / f"{Path(source).name}.{digest}.jsonl"


def _is_permanent(error: BaseException) -> bool:
    if isinstance(error, APIConnectionError):
        return False
    if isinstance(error, core.GoogleAPICallError):
        code = error.code if isinstance(error.code, int) else 0
        return 400 <= code < 500 and code not in (408, 429)
    return True


async def _recover_lost_creates(client: AsyncClient, manifest: Manifest, wanted: set[str]) -> int:
    """Finds items of this job the server has but the manifest lacks (a crash mid-create)."""
    missing = {key_label(k): k for k in wanted if k not in manifest.items}
    if not missing:
        return 0
    recovered = 0
    async for item in client.list_items(
        filter=f'labels.{JOB_LABEL} = "{manifest.job_id}"', page_size=1000
    ):
        key = missing.get((item.labels or {}).get(KEY_LABEL, ""))
        if key is not None and key not in manifest.items and item.name:
            manifest.record_item(key, item.name)
            recovered += 1
    return recovered


async def upload_items_async(
    client: AsyncClient,
    pending: Iterable[PendingItem],
    *,
    manifest: Manifest,
    total: int,
    set_key: str,
    display_name: str,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: ProgressCallback | None = None,
    allow_partial: bool = False,
) -> UploadResult:
    """Creates the items not yet in the manifest, then the set (once every item exists)."""
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    entries = list(pending)
    keys = [key for key, _ in entries]
    if len(set(keys)) != len(keys):
        duplicates = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"duplicate item keys: {duplicates[:5]}")
    resumed = sum(1 for k in keys if k in manifest.items)
    recovered = await _recover_lost_creates(client, manifest, set(keys)) if manifest.resuming else 0
    failures: list[Failure] = []
    done = sum(1 for k in keys if k in manifest.items)
    lock = asyncio.Lock()

    def report() -> None:
        if on_progress:
            on_progress(Progress(done=done, failed=len(failures), total=total, skipped=resumed))

    report()
    todo: Iterator[PendingItem] = iter(
        [(k, build) for k, build in entries if k not in manifest.items]
    )

    async def worker() -> None:
        nonlocal done
        for key, build in todo:
            try:
                item = build()
                labels = dict(item.labels or {})
                labels[JOB_LABEL] = manifest.job_id
                labels[KEY_LABEL] = key_label(key)
                item = item.model_copy(update={"labels": labels})
                created = await client.create_item(item, request_id=manifest.request_id(key))
            except asyncio.CancelledError:
                raise
            except Exception as error:
                reason = (
                    str(error) if _is_permanent(error) else f"{error} (transient: re-run to retry)"
                )
                async with lock:
                    failures.append(Failure(key, reason))
                    report()
                continue
            assert created.name is not None
            manifest.record_item(key, created.name)
            async with lock:
                done += 1
                report()

    await asyncio.gather(*(worker() for _ in range(min(concurrency, max(1, len(entries))))))
    result = UploadResult(evaluation_set=None, items=[], failures=failures, resumed=resumed)
    if recovered:
        result.notes.append(
            f"{recovered} items created by an interrupted run were found on the server"
        )
    names = [manifest.items[k] for k in keys if k in manifest.items]
    result.items = names
    if failures and not allow_partial:
        result.notes.append("the set was not created because some items failed; re-run to retry")
        return result
    if set_key in manifest.sets and not failures:
        result.evaluation_set = await client.get_set(manifest.sets[set_key])
        if list(result.evaluation_set.evaluation_items or []) != names:
            result.evaluation_set = await client.update_set(
                EvaluationSet(name=result.evaluation_set.name, evaluation_items=names)
            )
        return result
    set_request = f"{manifest.job_id}-set-{key_label(set_key + str(len(names)))}"
    created_set = await client.create_set(
        display_name=display_name, items=names, request_id=set_request
    )
    assert created_set.name is not None
    manifest.record_set(set_key, created_set.name)
    result.evaluation_set = created_set
    return result
