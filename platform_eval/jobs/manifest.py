"""The local manifest of a bulk upload: what was created, so a re-run creates nothing twice.

A JSON Lines file: a header naming the job, then one line per created resource, appended and
flushed to disk as soon as the server confirmed it. A crash loses at most the lines of creates
whose answers were in flight; those are recovered on resume (see ``upload``): their request
ids are derived from the job id and the item key, so a repeated create returns the first item
from a server that deduplicates, and items carry a label with the job id, so they can be found
by listing on one that does not.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from pathlib import Path
from typing import Any

from ..formats._problems import FormatError, Problem

VERSION = 1


def key_label(key: str) -> str:
    """A label-safe fingerprint of an item key (hex, 32 characters)."""
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class Manifest:
    def __init__(self, path: str | Path, *, parent: str, source: str) -> None:
        self.path = Path(path)
        self.parent = parent
        self.source = source
        self.items: dict[str, str] = {}
        self.sets: dict[str, str] = {}
        self._lock = threading.Lock()
        #: True when this run continues an earlier one (the manifest file already existed).
        self.resuming = self.path.exists()
        if self.resuming:
            self.job_id = self._read()
        else:
            self.job_id = uuid.uuid4().hex[:16]
            self._append(
                {"manifest": VERSION, "job": self.job_id, "parent": parent, "source": source}
            )

    def _read(self) -> str:
        job_id: str | None = None
        with self.path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    # A line cut by a crash mid-write: everything before it is intact.
                    continue
                if "manifest" in entry:
                    job_id = str(entry["job"])
                    if entry.get("parent") != self.parent:
                        raise FormatError(
                            [
                                Problem(
                                    str(self.path),
                                    f"line {number}",
                                    f"this manifest belongs to {entry.get('parent')}, not "
                                    f"{self.parent}; use another manifest file",
                                )
                            ]
                        )
                elif "item" in entry:
                    self.items[entry["key"]] = entry["item"]
                elif "set" in entry:
                    self.sets[entry["key"]] = entry["set"]
        if job_id is None:
            raise FormatError([Problem(str(self.path), "line 1", "not a platform-eval manifest")])
        return job_id

    def _append(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, separators=(",", ":")) + "\n")
                handle.flush()
                os.fsync(handle.fileno())

    def record_item(self, key: str, name: str) -> None:
        self.items[key] = name
        self._append({"key": key, "item": name})

    def record_set(self, key: str, name: str) -> None:
        self.sets[key] = name
        self._append({"key": key, "set": name})

    def request_id(self, key: str) -> str:
        return f"{self.job_id}-{key_label(key)}"
