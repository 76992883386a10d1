"""Bulk upload of evaluation items into the set that groups them, matching the source exactly.

The target is the truth, the local manifest only a journal of hints. Every item carries two
labels: its set's identity (the eval set and what kind of upload, never the file's path) and its
own (the case and a hash of its content). A run lists what the target holds under the set's
label, then:

- reuses the items whose content is unchanged,
- creates the missing ones (a bounded pool of async workers; request ids derived from the
  content, so a server that deduplicates returns the first item on a retry),
- points the set at exactly the items of the source, in its order (created when the target has
  none, found by the marker in its metadata before creating, so a lost answer never yields two),
- and leaves out of the set the items of cases that changed or left the source, and duplicates
  left by creates whose answers were lost. They stay on the target: results of earlier runs
  refer to them, so that those runs keep naming their cases and can be compared with new ones.

So a re-run against a fresh target creates everything again, an edited file uploads what changed,
and the same file uploaded from two folders creates nothing twice.
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

#: Label with the identity of the set an uploaded item belongs to.
SET_LABEL = "platform-eval-set"
#: Label with the identity of the item: its case and a hash of its content.
KEY_LABEL = "platform-eval-key"
#: Key in an EvaluationSet's ``metadata`` with the set's identity (sets have no labels).
SET_MARKER = "platformEvalSet"
DEFAULT_CONCURRENCY = 16
LIST_PAGE_SIZE = 1000


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
    removed: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures and self.evaluation_set is not None


ProgressCallback = Callable[[Progress], None]
PendingItem = tuple[str, Callable[[], EvaluationItem]]


def set_identity(scope: str) -> str:
    """The label value naming one set: an eval set's id and the kind of upload."""
    return key_label(scope)


def default_manifest_path(target: str, set_id: str) -> Path:
    """Where the journal of a set on a target lives: named by both, not by the source's path."""
    digest = hashlib.sha256(f"{target}|{set_id}".encode()).hexdigest()[:16]
    return Path(".platform-eval") / "manifests" / f"{set_id[:16]}.{digest}.jsonl"


def _is_permanent(error: BaseException) -> bool:
    if isinstance(error, APIConnectionError):
        return False
    if isinstance(error, core.GoogleAPICallError):
        code = error.code if isinstance(error.code, int) else 0
        return 400 <= code < 500 and code not in (408, 429)
    return True


@dataclass
class _Found:
    """What the target holds under a set's label."""

    items: dict[str, str] = field(default_factory=dict)
    unwanted: list[str] = field(default_factory=list)


async def _find_items(client: AsyncClient, set_id: str, wanted: Iterable[str]) -> _Found:
    by_label = {key_label(key): key for key in wanted}
    found = _Found()
    async for item in client.list_items(
        filter=f'labels.{SET_LABEL} = "{set_id}"', page_size=LIST_PAGE_SIZE
    ):
        if not item.name:
            continue
        key = by_label.get((item.labels or {}).get(KEY_LABEL, ""))
        if key is None or key in found.items:
            # A case that changed or left the source, or a second copy of one.
            found.unwanted.append(item.name)
        else:
            found.items[key] = item.name
    return found


async def _find_set(
    client: AsyncClient, manifest: Manifest, set_id: str, notes: list[str]
) -> EvaluationSet | None:
    remembered = manifest.sets.get(set_id)
    if remembered:
        try:
            return await client.get_set(remembered)
        except core.NotFound:
            notes.append(f"{remembered} is gone from the target; the set is made again")
    async for candidate in client.list_sets(page_size=LIST_PAGE_SIZE):
        marker = (
            candidate.metadata.get(SET_MARKER) if isinstance(candidate.metadata, dict) else None
        )
        if marker == set_id and candidate.name:
            manifest.record_set(set_id, candidate.name)
            return candidate
    return None


async def _create_items(
    client: AsyncClient,
    todo: list[PendingItem],
    *,
    set_id: str,
    manifest: Manifest,
    concurrency: int,
    report: Callable[[int, Failure | None], None],
) -> dict[str, str]:
    """Creates ``todo``; returns key -> name of each item created."""
    queue: Iterator[PendingItem] = iter(todo)
    created: dict[str, str] = {}

    async def worker() -> None:
        for key, build in queue:
            try:
                item = build()
                labels = {**(item.labels or {}), SET_LABEL: set_id, KEY_LABEL: key_label(key)}
                item = item.model_copy(update={"labels": labels})
                request_id = f"pe-{set_id[:16]}-{key_label(key)}"
                item = await client.create_item(item, request_id=request_id)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                transient = "" if _is_permanent(error) else " (transient: re-run to retry)"
                report(0, Failure(key, f"{error}{transient}"))
                continue
            assert item.name is not None
            created[key] = item.name
            manifest.record_item(key, item.name)
            report(1, None)

    await asyncio.gather(*(worker() for _ in range(min(concurrency, max(1, len(todo))))))
    return created


async def _point_set(
    client: AsyncClient,
    manifest: Manifest,
    *,
    set_id: str,
    names: list[str],
    display_name: str,
    notes: list[str],
) -> EvaluationSet:
    """The set with exactly ``names``: found and patched, or created once."""
    existing = await _find_set(client, manifest, set_id, notes)
    if existing is not None:
        if list(existing.evaluation_items or []) == names:
            return existing
        # The mask is the fields set here, spelled as the wire spells them.
        return await client.update_set(EvaluationSet(name=existing.name, evaluation_items=names))
    request_id = f"pe-set-{key_label(set_id + '|' + '|'.join(names))}"
    wanted = EvaluationSet(
        display_name=display_name, evaluation_items=names, metadata={SET_MARKER: set_id}
    )
    try:
        created = await client.create_set(wanted, request_id=request_id)
    except (APIConnectionError, core.ServerError):
        # The create may have landed with its answer lost: look before anyone makes a second.
        found = await _find_set(client, manifest, set_id, notes)
        if found is None:
            raise
        created = found
    assert created.name is not None
    manifest.record_set(set_id, created.name)
    return created


async def upload_items_async(
    client: AsyncClient,
    pending: Iterable[PendingItem],
    *,
    manifest: Manifest,
    set_id: str,
    display_name: str,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: ProgressCallback | None = None,
    allow_partial: bool = False,
) -> UploadResult:
    """Makes the target's set hold exactly ``pending``, creating only what it lacks."""
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    entries = list(pending)
    keys = [key for key, _ in entries]
    if len(set(keys)) != len(keys):
        duplicates = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"duplicate item keys: {duplicates[:5]}")
    notes: list[str] = []
    found = await _find_items(client, set_id, keys)
    forgotten = sum(1 for k in keys if k in manifest.items and k not in found.items)
    if forgotten:
        notes.append(f"{forgotten} items the manifest remembers are gone from the target")
    result = UploadResult(evaluation_set=None, items=[], resumed=len(found.items), notes=notes)
    counts = {"done": len(found.items)}

    def report(done: int, failure: Failure | None) -> None:
        counts["done"] += done
        if failure is not None:
            result.failures.append(failure)
        if on_progress:
            on_progress(
                Progress(
                    done=counts["done"],
                    failed=len(result.failures),
                    total=len(entries),
                    skipped=result.resumed,
                )
            )

    report(0, None)
    todo = [(k, build) for k, build in entries if k not in found.items]
    created = await _create_items(
        client, todo, set_id=set_id, manifest=manifest, concurrency=concurrency, report=report
    )
    there = {**found.items, **created}
    result.items = [there[k] for k in keys if k in there]
    if result.failures and not allow_partial:
        notes.append(
            "the set was not created or changed because some items failed; re-run to retry"
        )
        return result
    result.evaluation_set = await _point_set(
        client, manifest, set_id=set_id, names=result.items, display_name=display_name, notes=notes
    )
    if found.unwanted:
        result.removed = len(found.unwanted)
        notes.append(
            f"{result.removed} items of cases that changed or left the source were taken out of "
            "the set (kept on the target for the results of earlier runs)"
        )
    return result
