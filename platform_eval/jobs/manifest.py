"""The local journal of an upload: hints that save a re-run some work, never the truth.

The target is the truth. A re-run finds its set and items there by their labels, and checks
every hint in the journal against it: a set the journal remembers but the target no longer has
is created again. The journal names the set it made and the runs it started, so a re-run goes
straight to the set and attaches to an unfinished run instead of starting a second one.

JSON Lines: a header, then one line per entry. A line that cannot be read (cut by a crash, or
edited by hand) is skipped and counted; a new line never glues onto a cut one; a cut header does
not block the job.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from ..formats._problems import FormatError, Problem

VERSION = 2
#: The kinds of entry that name a resource: ``{"key": ..., "<kind>": name}``.
_KINDS = ("item", "set", "run")


def key_label(key: str) -> str:
    """A label-safe fingerprint of a key (lowercase hex, 32 characters)."""
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class Manifest:
    """The journal of one set's uploads and runs on one target."""

    def __init__(self, path: str | Path, *, parent: str, source: str) -> None:
        self.path = Path(path)
        self.parent = parent
        self.source = source
        self.items: dict[str, str] = {}
        self.sets: dict[str, str] = {}
        self.runs: dict[str, str] = {}
        #: Runs whose results were read: a re-run starts a new run instead of attaching.
        self.collected: set[str] = set()
        #: Lines that could not be read (a crash cut them, or they were edited).
        self.unreadable_lines = 0
        self._lock = threading.Lock()
        has_header = self._read() if self.path.exists() else False
        if not has_header:
            self._append({"manifest": VERSION, "parent": parent, "source": source})

    def _read(self) -> bool:
        has_header = False
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                entry = _entry(raw)
                if entry is None:
                    self.unreadable_lines += 1
                    continue
                if "manifest" in entry:
                    has_header = True
                    self._check_parent(entry, number)
                    continue
                key = entry.get("key")
                kind = next((k for k in _KINDS if isinstance(entry.get(k), str)), None)
                if isinstance(key, str) and kind is not None:
                    self._entries(kind)[key] = entry[kind]
                elif isinstance(entry.get("collected"), str):
                    self.collected.add(entry["collected"])
                else:
                    self.unreadable_lines += 1
        return has_header

    def _entries(self, kind: str) -> dict[str, str]:
        return {"item": self.items, "set": self.sets, "run": self.runs}[kind]

    def _check_parent(self, header: dict[str, Any], number: int) -> None:
        theirs = header.get("parent")
        if isinstance(theirs, str) and theirs != self.parent:
            raise FormatError(
                [
                    Problem(
                        str(self.path),
                        f"line {number}",
                        f"this manifest belongs to {theirs}, not {self.parent}; use another "
                        "manifest file",
                    )
                ]
            )

    def _append(self, *entries: dict[str, Any]) -> None:
        line = "".join(
            json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n" for entry in entries
        )
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab+") as handle:
                # A crash may have left the last line cut: start ours on a line of its own.
                if handle.tell() > 0:
                    handle.seek(-1, 2)
                    if handle.read(1) != b"\n":
                        line = "\n" + line
                handle.write(line.encode())

    def record_item(self, key: str, name: str) -> None:
        self.items[key] = name
        self._append({"key": key, "item": name})

    def record_items(self, pairs: list[tuple[str, str]]) -> None:
        """Many items in one append (an import's)."""
        self.items.update(pairs)
        self._append(*({"key": key, "item": name} for key, name in pairs))

    def record_set(self, key: str, name: str) -> None:
        self.sets[key] = name
        self._append({"key": key, "set": name})

    def record_run(self, key: str, name: str) -> None:
        self.runs[key] = name
        self._append({"key": key, "run": name})

    def record_collected(self, run_name: str) -> None:
        self.collected.add(run_name)
        self._append({"collected": run_name})


def _entry(raw: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return entry if isinstance(entry, dict) else None
