"""The replay cache: every judge call's answer, keyed by all that decides it.

The key is a SHA-256 of the model, the generation settings, the full contents sent, the
sample index and the occurrence of that same request, so that a change to any of them (an
edited case, another model, a new prompt template in google-adk) is a new call, and nothing else
is. A committed cache makes CI hermetic: ``replay_only`` runs make no call at all.

The occurrence tells apart identical requests that different askers make (two cases with the
same conversation, the ``--num-runs`` candidates of one case): each asker (metric, case,
candidate) keeps the occurrence it was first given, in ``judge_askers``, so that a re-run gives
every asker the answer it got the first time, not one of the answers twice. The first asker's
key is the request's key alone, as caches written before occurrences were counted have it.

google-adk gives each function call a random id (``adk-<uuid>``) that reaches its judges'
prompts; the key reads those ids by their order of appearance, so that the same conversation
run again is the same call. The prompt sent is never changed.

SQLite in WAL mode, one row per call, written with INSERT OR IGNORE: concurrent runs (threads
or processes) share one file safely. A file that is not a sound cache is reported, never used.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import PlatformEvalError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    answer TEXT NOT NULL,
    usage TEXT,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS judge_askers (
    request TEXT NOT NULL,
    asker TEXT NOT NULL,
    occurrence INTEGER NOT NULL,
    PRIMARY KEY (request, asker)
);
"""

#: google-adk's function call ids: ``adk-`` and a random UUID.
_ADK_CALL_ID = re.compile(r"adk-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class JudgeCacheError(PlatformEvalError):
    """The cache file cannot be used (corrupt, not a cache, not writable)."""


def _stable_ids(canonical: str) -> str:
    """ADK's random call ids replaced by their order of first appearance."""
    seen: dict[str, str] = {}

    def number(match: re.Match[str]) -> str:
        return seen.setdefault(match[0], f"adk-call-{len(seen)}")

    return _ADK_CALL_ID.sub(number, canonical)


def call_key(model: str, config: object, contents: object, sample: int, occurrence: int = 0) -> str:
    """The cache key of one call: canonical JSON of what decides the answer, hashed."""
    document = {"model": model, "config": config, "contents": contents, "sample": sample}
    if occurrence:
        document["occurrence"] = occurrence
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(_stable_ids(canonical).encode()).hexdigest()


class JudgeCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                str(self.path), check_same_thread=False, isolation_level=None, timeout=30
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
            (state,) = self._db.execute("PRAGMA quick_check").fetchone()
        except (sqlite3.Error, OSError) as exc:
            raise JudgeCacheError(
                f"the judge cache {self.path} cannot be used: {exc}; delete it (its answers are "
                "lost) or run with --judge-cache off"
            ) from None
        if state != "ok":
            raise JudgeCacheError(
                f"the judge cache {self.path} is corrupt ({state}); delete it or run with "
                "--judge-cache off"
            )

    def get(self, key: str) -> tuple[str, dict[str, Any] | None] | None:
        """(answer text, usage metadata as recorded) of a recorded call, or None."""
        with self._lock:
            try:
                row = self._db.execute(
                    "SELECT answer, usage FROM judge_calls WHERE key=?", (key,)
                ).fetchone()
            except sqlite3.Error as exc:
                raise JudgeCacheError(
                    f"the judge cache {self.path} cannot be read: {exc}"
                ) from None
        if row is None:
            return None
        answer, usage = row
        try:
            return str(answer), (json.loads(usage) if usage else None)
        except ValueError:
            raise JudgeCacheError(
                f"the judge cache {self.path} holds a damaged entry ({key[:12]}); delete the file"
            ) from None

    def put(
        self,
        key: str,
        model: str,
        answer: str,
        usage: dict[str, Any] | None,
        *,
        replace: bool = False,
    ) -> None:
        """Keeps an answer; one already kept under ``key`` stays unless ``replace`` (a run
        that asked the model afresh: ``--no-judge-cache``)."""
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self._lock:
            try:
                self._db.execute(
                    f"{verb} INTO judge_calls (key, model, answer, usage, created) "
                    "VALUES (?,?,?,?,?)",
                    (key, model, answer, json.dumps(usage) if usage else None, time.time()),
                )
            except sqlite3.Error as exc:
                raise JudgeCacheError(
                    f"the judge cache {self.path} cannot be written: {exc}"
                ) from None

    def forget(self, key: str) -> None:
        """Drops an answer kept under ``key`` (one its metric could not read): the next run
        asks the model again rather than replaying it."""
        with self._lock:
            try:
                self._db.execute("DELETE FROM judge_calls WHERE key=?", (key,))
            except sqlite3.Error as exc:
                raise JudgeCacheError(
                    f"the judge cache {self.path} cannot be written: {exc}"
                ) from None

    def occurrence(self, request: str, asker: str, *, record: bool) -> int | None:
        """The occurrence ``asker`` was given for ``request`` (the key of its first
        occurrence); a new asker is given the next one when ``record``, else None."""
        with self._lock:
            try:
                row = self._db.execute(
                    "SELECT occurrence FROM judge_askers WHERE request=? AND asker=?",
                    (request, asker),
                ).fetchone()
                if row is not None or not record:
                    return None if row is None else int(row[0])
                try:
                    # One statement, so that two processes never give one occurrence twice.
                    self._db.execute(
                        "INSERT OR IGNORE INTO judge_askers (request, asker, occurrence) "
                        "SELECT ?, ?, COALESCE(MAX(occurrence) + 1, 0) FROM judge_askers "
                        "WHERE request=?",
                        (request, asker, request),
                    )
                except sqlite3.OperationalError:
                    # Another process holds the write lock: the asker gets the next
                    # occurrence for now, unrecorded (its answer will not be kept either).
                    (given,) = self._db.execute(
                        "SELECT COALESCE(MAX(occurrence) + 1, 0) FROM judge_askers WHERE request=?",
                        (request,),
                    ).fetchone()
                    return int(given)
                (given,) = self._db.execute(
                    "SELECT occurrence FROM judge_askers WHERE request=? AND asker=?",
                    (request, asker),
                ).fetchone()
            except sqlite3.Error as exc:
                raise JudgeCacheError(
                    f"the judge cache {self.path} cannot be used: {exc}"
                ) from None
        return int(given)

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM judge_calls").fetchone()
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._db.close()
