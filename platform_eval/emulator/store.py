"""SQLite storage of the emulator: one table of JSON resources keyed by parent, collection, id.

One connection guarded by a lock serves the HTTP handlers and the run executor; every method
is one transaction, so a reader never sees half of a write.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from .._gc import decode
from ..types import WireModel

_SCHEMA = """
CREATE TABLE IF NOT EXISTS resources (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    parent TEXT NOT NULL,
    collection TEXT NOT NULL,
    rid TEXT NOT NULL,
    body TEXT NOT NULL,
    request_id TEXT,
    annotations TEXT,
    UNIQUE (parent, collection, rid)
);
-- A page of a list is a range of this index, however many resources there are.
CREATE INDEX IF NOT EXISTS resources_listing ON resources (parent, collection, seq);
CREATE UNIQUE INDEX IF NOT EXISTS resources_request_id
    ON resources (parent, collection, request_id) WHERE request_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS cancel_requests (
    name TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS buckets (
    bucket TEXT PRIMARY KEY,
    project TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS objects (
    bucket TEXT NOT NULL,
    name TEXT NOT NULL,
    data BLOB NOT NULL,
    content_type TEXT,
    generation INTEGER NOT NULL,
    PRIMARY KEY (bucket, name)
);
-- Which executor runs a run: one per run across every process on this database file.
CREATE TABLE IF NOT EXISTS run_leases (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    heartbeat REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS run_progress (
    name TEXT PRIMARY KEY,
    done INTEGER NOT NULL,
    total INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS run_judge_usage (
    name TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS telemetry (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    signal TEXT NOT NULL,
    body TEXT NOT NULL
);
"""


_log = logging.getLogger(__name__)

#: ``PRAGMA user_version`` from which every stored body is valid JSON (no bare NaN/Infinity).
_BODIES_ARE_JSON = 1


def encode(body: Any) -> str:
    """A resource as it is stored, and served as it is: compact JSON.

    A number that is not finite (a computed NaN score) is written as proto3 JSON writes a
    double, ``"NaN"`` or ``"Infinity"``: a bare ``NaN`` is not JSON, and SQLite refuses every
    query that reads a body holding one (one such row broke every filtered list of a project).
    """
    try:
        # pydantic-core's encoder: a third of json.dumps's time, on every write of the emulator.
        return to_json(body, inf_nan_mode="strings").decode()
    except (PydanticSerializationError, UnicodeDecodeError):
        # What it cannot write (a lone surrogate, an object JSON has no form for) json does,
        # or refuses with its own error; never as text that is not JSON.
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode_model(model: WireModel) -> str:
    """``encode(model.to_wire())``, written by pydantic-core straight from the model with no
    dict in between (an import writes thousands). Text that may hold a bare ``NaN`` or
    ``Infinity``, or a model pydantic-core cannot write, takes ``encode``'s path."""
    try:
        text = (
            type(model)
            .__pydantic_serializer__.to_json(model, by_alias=True, exclude_none=True)
            .decode()
        )
    except (PydanticSerializationError, UnicodeDecodeError):
        return encode(model.to_wire())
    if "NaN" in text or "Infinity" in text:
        return encode(model.to_wire())
    return text


def failure(exc: sqlite3.Error) -> str:
    """A database error in the words a run's error or an API error gives it."""
    return f"the emulator's database failed: {exc}"


class StoredJson(dict[str, Any]):
    """A resource as stored, with the JSON text it is stored as: answered as it is, not encoded
    a second time."""

    __slots__ = ("text",)

    def __init__(self, body: dict[str, Any], text: str) -> None:
        super().__init__(body)
        self.text = text


class Store:
    def __init__(self, path: str | None = None) -> None:
        self.path = path or ":memory:"
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        if self.path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(resources)")}
        if "annotations" not in columns:  # a database file of an earlier version
            self._db.execute("ALTER TABLE resources ADD COLUMN annotations TEXT")
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version < _BODIES_ARE_JSON:
            self._rewrite_bodies_that_are_not_json()
            self._db.execute(f"PRAGMA user_version={_BODIES_ARE_JSON}")

    def _rewrite_bodies_that_are_not_json(self) -> None:
        """Bodies an earlier version stored with a bare NaN or Infinity, written as JSON.

        SQLite refuses every query that reads such a body ("malformed JSON"), so one of them
        made each filtered list and ordered list of its project answer 500. Python reads the
        bare constants, and ``encode`` writes them as proto3 JSON does.
        """
        with self.transaction() as db:
            rows = db.execute("SELECT seq, body FROM resources WHERE NOT json_valid(body)")
            for seq, body in rows.fetchall():
                try:
                    repaired = encode(json.loads(body))
                except ValueError:
                    _log.warning("resource %s holds text that is not JSON; left as it is", seq)
                    continue
                db.execute("UPDATE resources SET body=? WHERE seq=?", (repaired, seq))

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                # SQLite ends some transactions itself on an error (a full disk): a ROLLBACK
                # then would fail and hide the error that matters.
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- resources ------------------------------------------------------------------------

    def get(self, parent: str, collection: str, rid: str) -> dict[str, Any] | None:
        text = self.get_text(parent, collection, rid)
        return json.loads(text) if text is not None else None

    def get_text(self, parent: str, collection: str, rid: str) -> str | None:
        """A resource's JSON as stored (to answer with, not decoded and encoded again)."""
        with self._lock:
            row = self._db.execute(
                "SELECT body FROM resources WHERE parent=? AND collection=? AND rid=?",
                (parent, collection, rid),
            ).fetchone()
        return str(row[0]) if row else None

    def get_many(
        self, parent: str, collection: str, rids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            for start in range(0, len(rids), 500):
                chunk = list(rids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                for rid, body in self._db.execute(
                    f"SELECT rid, body FROM resources WHERE parent=? AND collection=? "
                    f"AND rid IN ({marks})",
                    (parent, collection, *chunk),
                ):
                    found[rid] = json.loads(body)
        return found

    def by_request_id(self, parent: str, collection: str, request_id: str) -> StoredJson | None:
        with self._lock:
            return self._by_request_id(self._db, parent, collection, request_id)

    @staticmethod
    def _by_request_id(
        db: sqlite3.Connection, parent: str, collection: str, request_id: str
    ) -> StoredJson | None:
        row = db.execute(
            "SELECT body FROM resources WHERE parent=? AND collection=? AND request_id=?",
            (parent, collection, request_id),
        ).fetchone()
        return StoredJson(json.loads(row[0]), row[0]) if row else None

    def insert(
        self,
        parent: str,
        collection: str,
        rid: str,
        body: dict[str, Any],
        request_id: str | None = None,
        annotations: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """Inserts a resource; with a request id already used, returns the earlier one.

        ``annotations``: what the emulator knows of the resource beyond its fields (the run a
        result item kept in Cloud Storage belongs to), for filters; never part of the resource.
        Returns (resource, created).
        """
        with self.transaction() as db:
            earlier = (
                self._by_request_id(db, parent, collection, request_id) if request_id else None
            )
            if earlier is not None:
                return earlier, False
            text = encode(body)
            db.execute(
                "INSERT INTO resources (parent, collection, rid, body, request_id, annotations) "
                "VALUES (?,?,?,?,?,?)",
                (
                    parent,
                    collection,
                    rid,
                    text,
                    request_id,
                    json.dumps(annotations) if annotations else None,
                ),
            )
        return StoredJson(body, text), True

    def insert_batch(
        self,
        resources: Sequence[tuple[str, str, str, dict[str, Any] | str, str | None]],
        objects: Sequence[tuple[str, str, bytes, str]] = (),
        *,
        or_ignore: bool = False,
    ) -> None:
        """Resources ``(parent, collection, rid, body, request id)`` and Cloud Storage objects
        ``(bucket, name, data, content type)`` in one transaction: an import lands whole or not
        at all. ``or_ignore`` keeps a resource already stored under the same key (one named by
        its content, written by two requests at once). A body given as text is stored as it
        is: JSON written by the caller, which has checked it can be."""
        generation = time.time_ns()
        with self.transaction() as db:
            db.executemany(
                "INSERT INTO objects (bucket, name, data, content_type, generation) "
                "VALUES (?,?,?,?,?) "
                "ON CONFLICT (bucket, name) DO UPDATE SET data=excluded.data, "
                "content_type=excluded.content_type, generation=excluded.generation",
                [(b, n, d, c, generation) for b, n, d, c in objects],
            )
            db.executemany(
                f"INSERT {'OR IGNORE ' if or_ignore else ''}INTO resources "
                "(parent, collection, rid, body, request_id) "
                "VALUES (?,?,?,?,?)",
                [
                    (p, c, r, body if isinstance(body, str) else encode(body), request_id)
                    for p, c, r, body, request_id in resources
                ],
            )

    def annotation(self, parent: str, collection: str, rid: str, key: str) -> Any:
        """One of a resource's annotations (see ``insert``), or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT json_extract(annotations, ?) FROM resources "
                "WHERE parent=? AND collection=? AND rid=?",
                (f"$.{key}", parent, collection, rid),
            ).fetchone()
        # A run's frozen input holds every item's body: megabytes, decoded as one.
        return decode(row[0]) if row and row[0] is not None else None

    def drop_annotation(self, parent: str, collection: str, rid: str, key: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE resources SET annotations=json_remove(annotations, ?) "
                "WHERE parent=? AND collection=? AND rid=? AND annotations IS NOT NULL",
                (f"$.{key}", parent, collection, rid),
            )

    def replace(self, parent: str, collection: str, rid: str, body: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE resources SET body=? WHERE parent=? AND collection=? AND rid=?",
                (encode(body), parent, collection, rid),
            )

    def delete(self, parent: str, collection: str, rid: str) -> bool:
        with self._lock:
            cursor = self._db.execute(
                "DELETE FROM resources WHERE parent=? AND collection=? AND rid=?",
                (parent, collection, rid),
            )
        return cursor.rowcount > 0

    def page(
        self,
        parent: str,
        collection: str,
        where: str,
        args: Sequence[Any],
        *,
        limit: int,
        after_seq: int = 0,
        order: str = "",
        order_args: Sequence[Any] = (),
        offset: int = 0,
    ) -> list[tuple[int, str]]:
        """A page in creation order after ``after_seq``; or, with ``order`` (SQL terms over the
        body), in that order from ``offset``: (seq, JSON as stored) per resource."""
        sql = (
            "SELECT seq, body FROM resources WHERE parent=? AND collection=? AND seq>? "
            f"{'AND (' + where + ')' if where else ''} "
            f"ORDER BY {order + ', ' if order else ''}seq LIMIT ? OFFSET ?"
        )
        params = (parent, collection, after_seq, *args, *order_args, limit, offset)
        with self._lock:
            rows = self._db.execute(sql, params).fetchall()
        return [(seq, str(body)) for seq, body in rows]

    def scan(self, collection: str, under: str = "") -> list[tuple[str, dict[str, Any]]]:
        """Every resource of a collection whose parent starts with ``under`` (every parent by
        default), as (parent, body) in creation order."""
        sql = "SELECT parent, body FROM resources WHERE collection=?"
        args: list[str] = [collection]
        if under:
            # A range of parents, so that the listing index finds them without a full scan.
            sql += " AND parent >= ? AND parent < ?"
            args += [under, under + "\U0010ffff"]
        with self._lock:
            rows = self._db.execute(f"{sql} ORDER BY seq", args).fetchall()
        return [(parent, json.loads(body)) for parent, body in rows]

    def find(self, collection: str, under: str, rid: str) -> tuple[str, dict[str, Any]] | None:
        """The resource of a collection with id ``rid`` under any parent starting with
        ``under`` (an operation found by its id alone), as (parent, body)."""
        sql = (
            "SELECT parent, body FROM resources WHERE collection=? AND rid=? "
            "AND parent >= ? AND parent < ? ORDER BY seq LIMIT 1"
        )
        with self._lock:
            row = self._db.execute(sql, (collection, rid, under, under + "\U0010ffff")).fetchone()
        return (str(row[0]), json.loads(row[1])) if row else None

    def add_cancel_request(self, name: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR IGNORE INTO cancel_requests (name) VALUES (?)", (name,))

    def drop_cancel_request(self, name: str) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM cancel_requests WHERE name=?", (name,))

    def set_progress(self, name: str, done: int, total: int) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO run_progress (name, done, total) VALUES (?,?,?) "
                "ON CONFLICT (name) DO UPDATE SET done=excluded.done, total=excluded.total",
                (name, done, total),
            )

    def set_judge_usage(self, name: str, usage: dict[str, Any]) -> None:
        """What judging run ``name`` cost (the report ``judges.usage_report`` makes)."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO run_judge_usage (name, body) VALUES (?,?) "
                "ON CONFLICT (name) DO UPDATE SET body=excluded.body",
                (name, json.dumps(usage)),
            )

    def judge_usage(self, name: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT body FROM run_judge_usage WHERE name=?", (name,)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def progress(self, name: str) -> tuple[int, int] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT done, total FROM run_progress WHERE name=?", (name,)
            ).fetchone()
        return (int(row[0]), int(row[1])) if row else None

    # -- leases: one executor per run, whatever the number of processes ----------------------

    def claim_run(self, name: str, owner: str, stale_after: float) -> bool:
        """True when ``owner`` holds the run's lease now: it was free, already its own, or its
        holder has not renewed it for ``stale_after`` seconds (a process that died)."""
        now = time.time()
        with self.transaction() as db:
            db.execute(
                "INSERT INTO run_leases (name, owner, heartbeat) VALUES (?,?,?) "
                "ON CONFLICT (name) DO UPDATE SET owner=excluded.owner, "
                "heartbeat=excluded.heartbeat "
                "WHERE run_leases.owner=excluded.owner OR run_leases.heartbeat < ?",
                (name, owner, now, now - stale_after),
            )
            (holder,) = db.execute("SELECT owner FROM run_leases WHERE name=?", (name,)).fetchone()
        return bool(holder == owner)

    def renew_leases(self, owner: str, names: Sequence[str]) -> set[str]:
        """Renews ``owner``'s leases on ``names``; returns those it no longer holds."""
        now = time.time()
        lost: set[str] = set()
        with self.transaction() as db:
            for name in names:
                renewed = db.execute(
                    "UPDATE run_leases SET heartbeat=? WHERE name=? AND owner=?",
                    (now, name, owner),
                ).rowcount
                if not renewed:
                    lost.add(name)
        return lost

    def release_run(self, name: str, owner: str) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM run_leases WHERE name=? AND owner=?", (name, owner))

    def is_cancel_requested(self, name: str) -> bool:
        """A cancel asked of any process on this database (its own set is read at start)."""
        with self._lock:
            row = self._db.execute("SELECT 1 FROM cancel_requests WHERE name=?", (name,)).fetchone()
        return row is not None

    def cancel_requests(self) -> set[str]:
        with self._lock:
            return {row[0] for row in self._db.execute("SELECT name FROM cancel_requests")}

    def reset(self) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM resources")
            db.execute("DELETE FROM objects")
            db.execute("DELETE FROM buckets")
            db.execute("DELETE FROM cancel_requests")
            db.execute("DELETE FROM telemetry")
            db.execute("DELETE FROM run_progress")
            db.execute("DELETE FROM run_judge_usage")
            db.execute("DELETE FROM run_leases")
