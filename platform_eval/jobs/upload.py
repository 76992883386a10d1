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
from typing import Any

from google.api_core import exceptions as core

from .._env import positive_number
from .._gc import collector_paused
from .._operations import jsonl
from ..client import AsyncClient
from ..errors import APIConnectionError, TargetUnreachableError, WaitTimeoutError
from ..types import EvaluationItem, EvaluationSet
from .manifest import Manifest, key_label
from .waiting import time_left

#: Label with the identity of the set an uploaded item belongs to.
SET_LABEL = "platform-eval-set"
#: Label with the identity of the item: its case and a hash of its content.
KEY_LABEL = "platform-eval-key"
#: Key in an EvaluationSet's ``metadata`` with the set's identity (sets have no labels).
SET_MARKER = "platformEvalSet"
#: Key in the metadata of a set an import made on the way (an import always makes a set); it
#: names the set it belongs to, and is deleted once that set holds its items.
IMPORT_MARKER = "platformEvalImportPart"
DEFAULT_CONCURRENCY = 16
LIST_PAGE_SIZE = 1000
#: Bytes of JSON Lines per import: under the 4 MB an inline source takes.
IMPORT_CHUNK_BYTES = 3_500_000
#: Imports sent at once: each holds a chunk in memory, and a few keep the target busy.
IMPORTS_IN_FLIGHT = 4
#: The first import's size: small, so that the target starts while the rest is built.
FIRST_IMPORT_CHUNK_BYTES = 250_000


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
    #: Each item of ``items`` -> the key it was uploaded under.
    keys: dict[str, str] = field(default_factory=dict)
    resumed: int = 0
    removed: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures and self.evaluation_set is not None


ProgressCallback = Callable[[Progress], None]
PendingItem = tuple[str, Callable[[], EvaluationItem]]


def candidate_name(candidate: str, run: int, runs: int) -> str:
    """``agent`` for a case's only candidate, ``agent#2`` for the second of several."""
    return candidate if runs == 1 else f"{candidate}#{run}"


def set_identity(scope: str) -> str:
    """The label value naming one set: an eval set's id and the kind of upload."""
    return key_label(scope)


def default_manifest_path(target: str, set_id: str) -> Path:
    """Where the journal of a set on a target lives: named by both, not by the source's path."""
    digest = hashlib.sha256(f"{target}|{set_id}".encode()).hexdigest()[:16]
    return Path(".platform-eval") / "manifests" / f"{set_id[:16]}.{digest}.jsonl"


def import_destination_for(client: AsyncClient, bulk_import: bool | str) -> str | None:
    """Where an upload's imports write payloads, or None to create items one by one.

    ``bulk_import`` is a ``gs://`` prefix, or True for the default: a bucket of the project on
    the emulator; on the service, which needs a bucket the user owns, no import."""
    if isinstance(bulk_import, str):
        if not bulk_import.startswith("gs://") or len(bulk_import) <= len("gs://"):
            raise ValueError(f"bulk_import must be a gs:// prefix or a bool, got {bulk_import!r}")
        return bulk_import
    if bulk_import and client.is_emulator:
        return f"gs://{client.project}-platform-eval/imports/"
    return None


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
    return _sorted_out(await _labelled_items(client, set_id), wanted)


async def _labelled_items(client: AsyncClient, set_id: str) -> list[tuple[str, str]]:
    """(name, key label) of every item the target holds of the set."""
    return [
        (item.name, (item.labels or {}).get(KEY_LABEL, ""))
        async for item in client.list_items(
            filter=f'labels.{SET_LABEL} = "{set_id}"', page_size=LIST_PAGE_SIZE
        )
        if item.name
    ]


def _sorted_out(labelled: list[tuple[str, str]], wanted: Iterable[str]) -> _Found:
    by_label = {key_label(key): key for key in wanted}
    found = _Found()
    for name, label in labelled:
        key = by_label.get(label)
        if key is None or key in found.items:
            # A case that changed or left the source, or a second copy of one.
            found.unwanted.append(name)
        else:
            found.items[key] = name
    return found


async def _find_set(
    client: AsyncClient,
    manifest: Manifest,
    set_id: str,
    notes: list[str],
    parts: list[str] | None = None,
    listed: bool = False,
) -> EvaluationSet | None:
    """The set named ``set_id`` on the target; the import parts seen go into ``parts``.
    ``listed``: read the listing even where the journal names the set."""
    remembered = manifest.sets.get(set_id)
    if remembered and not listed:
        try:
            known = await client.get_set(remembered)
        except core.NotFound:
            notes.append(f"{remembered} is gone from the target; the set is made again")
        else:
            metadata = known.metadata if isinstance(known.metadata, dict) else {}
            if metadata.get(SET_MARKER) == set_id:
                return known
            # The journal names a set this upload did not make (an edited or copied journal):
            # that set is left alone, and this upload's own set is looked for.
            notes.append(
                f"the journal names {remembered}, which is not this upload's set: it is left "
                "as it is"
            )
    found: EvaluationSet | None = None
    async for candidate in client.list_sets(page_size=LIST_PAGE_SIZE):
        metadata = candidate.metadata if isinstance(candidate.metadata, dict) else {}
        if metadata.get(SET_MARKER) == set_id and candidate.name and found is None:
            manifest.record_set(set_id, candidate.name)
            found = candidate
            if parts is None:
                break
        elif metadata.get(IMPORT_MARKER) == set_id and candidate.name and parts is not None:
            parts.append(candidate.name)
    return found


@dataclass
class _Imported:
    created: dict[str, str] = field(default_factory=dict)
    #: Entries an import did not create, or whose answer was lost: looked for, then created.
    leftover: list[PendingItem] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    #: Imports not done in time (operation name, its entries): what they created is kept.
    unfinished: list[tuple[str, list[PendingItem]]] = field(default_factory=list)
    #: An import may have made a set whose name never came back (refused, lost, unfinished):
    #: the sets are listed again for it.
    unnamed_parts: bool = False
    #: The upload's own set, when one import made it (``_import_items``' ``set_made``).
    own_set: EvaluationSet | None = None


def _labelled(key: str, build: Callable[[], EvaluationItem], set_id: str) -> EvaluationItem:
    item = build()
    labels = {**(item.labels or {}), SET_LABEL: set_id, KEY_LABEL: key_label(key)}
    return item.model_copy(update={"labels": labels})


#: How long one import may take to finish (seconds) before its items are created one by one
#: instead: an import that never ends must not hold an upload for ever (the emulator's take
#: milliseconds, the service's seconds). ``PLATFORM_EVAL_IMPORT_WAIT`` sets it.
IMPORT_WAIT_ENV = "PLATFORM_EVAL_IMPORT_WAIT"
DEFAULT_IMPORT_WAIT = 300.0


def _import_chunks(
    todo: list[PendingItem], set_id: str, report: Callable[[int, Failure | None], None]
) -> Iterator[tuple[list[PendingItem], bytes, bool]]:
    """``todo`` as JSON Lines in chunks an inline import takes, each with whether it is the
    whole of ``todo``; items that cannot be built are reported as failures. The first chunk is
    small, so that the target works on it while the others are built, unless the whole set
    looks to fit one import: then it is one import, whose set can be the upload's own."""
    failed: list[Failure] = []

    def noting(done: int, failure: Failure | None) -> None:
        if failure is not None:
            failed.append(failure)
        report(done, failure)

    chunk = _Chunk(FIRST_IMPORT_CHUNK_BYTES)
    pending = iter(todo)
    first = True
    while True:
        # Building is CPU alone, and its objects live until the chunk is sent: no collection
        # walks them meanwhile (never held across the yield, which waits on the network).
        with collector_paused():
            more = chunk.fill(pending, set_id, noting)
            if first and more and chunk.size * len(todo) <= IMPORT_CHUNK_BYTES * len(chunk.entries):
                chunk.limit = IMPORT_CHUNK_BYTES
                more = chunk.fill(pending, set_id, noting)
        if not chunk.lines:
            return
        yield chunk.entries, b"\n".join(chunk.lines), first and not more and not failed
        chunk, first = _Chunk(IMPORT_CHUNK_BYTES, chunk.carried), False


@dataclass
class _Chunk:
    """Lines of one import, at most ``limit`` bytes (or a single line)."""

    limit: int
    #: The line that did not fit the chunk before this one.
    carried: tuple[PendingItem, bytes] | None = None
    entries: list[PendingItem] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)
    size: int = 0

    def fill(
        self,
        pending: Iterator[PendingItem],
        set_id: str,
        report: Callable[[int, Failure | None], None],
    ) -> bool:
        """Adds entries up to the limit; True when one is left over (``carried``)."""
        if self.carried is not None:
            entry, line = self.carried
            if self.lines and self.size + len(line) + 1 > self.limit:
                return True
            self.carried = None
            self._add(entry, line)
        for key, build in pending:
            try:
                line = jsonl([_labelled(key, build, set_id)])
            except Exception as error:
                report(0, Failure(key, str(error)))
                continue
            if self.lines and self.size + len(line) + 1 > self.limit:
                self.carried = ((key, build), line)
                return True
            self._add((key, build), line)
        return False

    def _add(self, entry: PendingItem, line: bytes) -> None:
        self.entries.append(entry)
        self.lines.append(line)
        self.size += len(line) + 1


async def _import_items(
    client: AsyncClient,
    todo: list[PendingItem],
    *,
    set_id: str,
    destination: str,
    display_name: str,
    manifest: Manifest,
    concurrency: int,
    report: Callable[[int, Failure | None], None],
    set_made: bool,
) -> _Imported:
    """Creates ``todo`` with ``evaluationSets:import``, some megabytes per call. Unless
    ``set_made`` (the target holds the upload's set already), an import of the whole of
    ``todo`` makes the upload's own set, not a part."""
    outcome = _Imported()

    async def one(entries: list[PendingItem], data: bytes, whole: bool) -> None:
        keys = [key for key, _ in entries]
        own = whole and not set_made
        part = (
            EvaluationSet(display_name=display_name, metadata={SET_MARKER: set_id})
            if own
            else EvaluationSet(
                display_name=f"{display_name} (import part)", metadata={IMPORT_MARKER: set_id}
            )
        )
        try:
            future = await client.import_set(
                content=data,
                evaluation_set=part,
                gcs_destination=destination,
                # Not a part's id: a retry must not be answered with a part an earlier
                # upload of the same items made.
                request_id=f"pe-{'own' if own else 'import'}-"
                f"{key_label(set_id + '|' + '|'.join(keys))}",
            )
            wait = time_left(positive_number(IMPORT_WAIT_ENV, DEFAULT_IMPORT_WAIT))
            imported = await future.wait(wait)
        except asyncio.CancelledError:
            raise
        except WaitTimeoutError:
            # Still going: what it created is looked for, and the rest is not created one by
            # one, which would make second copies when it ends.
            outcome.unfinished.append((future.name or "(unnamed)", entries))
            outcome.unnamed_parts = True
            return
        except Exception:
            # Refused (a bad item, or no import on this target) or answer lost: the items are
            # looked for, and created one by one, each failure with its own reason.
            outcome.leftover.extend(entries)
            outcome.unnamed_parts = True
            return
        if own and imported.name:
            # Patched by ``_point_set`` if it does not hold every item as wanted.
            outcome.own_set = imported
            manifest.record_set(set_id, imported.name)
        elif imported.name:
            outcome.parts.append(imported.name)
        names = imported.evaluation_items or []
        if len(names) != len(keys):
            outcome.leftover.extend(entries)
            return
        outcome.created.update(zip(keys, names, strict=True))
        manifest.record_items(list(zip(keys, names, strict=True)))
        report(len(keys), None)

    # The chunks are built as workers take them: a few megabytes in memory, not the whole set.
    chunks = _import_chunks(todo, set_id, report)

    async def worker() -> None:
        for entries, data, whole in chunks:
            await one(entries, data, whole)

    await asyncio.gather(*(worker() for _ in range(min(concurrency, IMPORTS_IN_FLIGHT))))
    return outcome


async def _drop_parts(client: AsyncClient, parts: list[str], notes: list[str]) -> None:
    """Deletes the sets imports made on the way (their items stay: the set holds them)."""

    async def drop(name: str) -> bool:
        try:
            await client.delete_set(name)
        except core.NotFound:
            pass
        except Exception:
            return False
        return True

    # All at once: each is a round trip of its own, and none depends on another.
    dropped = await asyncio.gather(*(drop(name) for name in parts))
    kept = dropped.count(False)
    if kept:
        notes.append(f"{kept} sets made by imports on the way could not be deleted")


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
    # The first item the target could not be reached for, after its own retries: no other
    # item is started then (each would spend the same retry budget against a dead target).
    unreachable: list[APIConnectionError] = []

    async def worker() -> None:
        for key, build in queue:
            if unreachable:
                return
            try:
                item = _labelled(key, build, set_id)
                request_id = f"pe-{set_id[:16]}-{key_label(key)}"
                item = await client.create_item(item, request_id=request_id)
            except asyncio.CancelledError:
                raise
            except APIConnectionError as error:
                unreachable.append(error)
                return
            except Exception as error:
                transient = "" if _is_permanent(error) else " (transient: re-run to retry)"
                report(0, Failure(key, f"{error}{transient}"))
                continue
            assert item.name is not None
            created[key] = item.name
            manifest.record_item(key, item.name)
            report(1, None)

    await asyncio.gather(*(worker() for _ in range(min(concurrency, max(1, len(todo))))))
    if unreachable:
        raise TargetUnreachableError(
            f"the upload stopped: {unreachable[0]}; {len(created)} of the {len(todo)} items "
            "to create were created and are kept. Run the same command again to resume"
        )
    return created


async def _point_set(
    client: AsyncClient,
    manifest: Manifest,
    *,
    set_id: str,
    names: list[str],
    display_name: str,
    notes: list[str],
    existing: EvaluationSet | None,
    held: list[str],
) -> EvaluationSet:
    """The set with exactly ``names``: ``existing`` (the set as it was looked for when the
    upload began) patched, or created once. ``held`` gets the items the set held before."""
    if existing is not None:
        held.extend(existing.evaluation_items or [])
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


#: Turns of the event loop given to the lookups before the items are read: enough for their
#: requests to be written on open connections (the reading then holds the loop).
_TURNS_TO_SEND = 20


async def _sent(lookups: asyncio.Future[Any]) -> None:
    """Lets the lookups' requests go out before CPU-bound work holds the loop; their answers
    wait in the sockets meanwhile."""
    for _ in range(_TURNS_TO_SEND):
        if lookups.done():
            return
        await asyncio.sleep(0)


async def upload_items_async(
    client: AsyncClient,
    pending: Iterable[PendingItem] | Callable[[], Iterable[PendingItem]],
    *,
    manifest: Manifest,
    set_id: str,
    display_name: str,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: ProgressCallback | None = None,
    allow_partial: bool = False,
    import_destination: str | None = None,
) -> UploadResult:
    """Makes the target's set hold exactly ``pending``, creating only what it lacks.

    ``pending`` may be a callable that reads them: what the target holds is looked for while it
    runs. With ``import_destination`` (a ``gs://`` prefix for the payloads), a set the target holds
    nothing of is sent with ``evaluationSets:import``, megabytes per call, instead of one create
    per item; whatever an import does not create is created one by one.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    notes: list[str] = []
    # What the target holds is looked for while the items are read (``pending`` a callable),
    # and the set while the items are: round trips at once, not one after the other. Parts
    # earlier imports left on the way are found by the same listing.
    parts: list[str] = []
    lookups = asyncio.gather(
        _labelled_items(client, set_id), _find_set(client, manifest, set_id, notes, parts)
    )
    try:
        if callable(pending):
            await _sent(lookups)
            pending = pending()
        entries = list(pending)
        keys = [key for key, _ in entries]
        if len(set(keys)) != len(keys):
            duplicates = sorted({k for k in keys if keys.count(k) > 1})
            raise ValueError(f"duplicate item keys: {duplicates[:5]}")
        labelled, existing = await lookups
    except BaseException:
        lookups.cancel()
        await asyncio.gather(lookups, return_exceptions=True)
        raise
    found = _sorted_out(labelled, keys)
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
    there = dict(found.items)
    if import_destination and todo and not found.items and not found.unwanted:
        imported = await _import_items(
            client,
            todo,
            set_id=set_id,
            destination=import_destination,
            display_name=display_name,
            manifest=manifest,
            concurrency=concurrency,
            report=report,
            set_made=existing is not None,
        )
        there.update(imported.created)
        parts += imported.parts
        existing = existing or imported.own_set
        if imported.unnamed_parts:
            # An import's set may have landed with its answer lost: the upload's own, or a
            # part, found by its marker rather than made or left a second time.
            existing = await _find_set(client, manifest, set_id, notes, parts, listed=True)
        todo = imported.leftover
        for operation, unfinished in imported.unfinished:
            landed = await _find_items(client, set_id, [key for key, _ in unfinished])
            there.update(landed.items)
            report(len(landed.items), None)
            reason = (
                f"the import operation {operation} did not finish in time; upload again to "
                "pick up what it created"
            )
            for key, _ in unfinished:
                if key not in landed.items:
                    report(0, Failure(key, reason))
        if todo:
            landed = await _find_items(client, set_id, [key for key, _ in todo])
            there.update(landed.items)
            report(len(landed.items), None)
            todo = [(k, build) for k, build in todo if k not in landed.items]
    there.update(
        await _create_items(
            client, todo, set_id=set_id, manifest=manifest, concurrency=concurrency, report=report
        )
    )
    result.items = [there[k] for k in keys if k in there]
    result.keys = {there[k]: k for k in keys if k in there}
    if result.failures and not allow_partial:
        notes.append(
            "the set was not created or changed because some items failed; re-run to retry"
        )
        return result
    held: list[str] = []
    result.evaluation_set = await _point_set(
        client,
        manifest,
        set_id=set_id,
        names=result.items,
        display_name=display_name,
        notes=notes,
        existing=existing,
        held=held,
    )
    await _drop_parts(client, sorted(set(parts)), notes)
    # Taken out now: what the set held and holds no more (items taken out by an earlier
    # upload stay on the target, labelled, and are not counted again). Said once, by the
    # report's summary.
    result.removed = len(set(held) - set(result.items))
    return result
