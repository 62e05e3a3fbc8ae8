"""The service's store: requests and their plans in SQLite (WAL), docs/service.md.

One row per request, whatever its state (held, committed, refused, cancelled, expired,
broken); a change is one transaction, committed whole or not at all. The links' rates and
margins are stored too, so that a restart with another capacity re-plans. Dates are
integer ns since the Unix epoch, rates integer bit/s, a plan its integer segments
(itb.service.intplan). With `itb serve --execute` each launched transfer has a row in
`runs` (launched, done, failed, interrupted, missed).

Durability: every transaction is written with `synchronous=NORMAL` (WAL: it survives the
process being killed); a commitment, a cancel, a run or a capacity change is then made
durable by `sync` before it is answered (the WAL fsynced outside the ledger's lock, one
fsync for every change before it: a group commit); a quote's hold or refusal is not.
Checkpoints run in a thread of their own. Refused quotes are kept, the latest
`REFUSED_KEPT`.

A file is opened only when it is a store (`inspect`): new or empty, or a SQLite database
whose `meta` table says it is ITB's, of this format; anything else is refused before
anything is written to it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from itb.service.intplan import IntPlan, IntRequest

STATES = ("held", "committed", "refused", "cancelled", "expired", "broken")
ACTIVE = ("held", "committed")  # the states whose plans use the link
RUN_STATES = ("launched", "done", "failed", "interrupted", "missed")
FORMAT = 2
APPLICATION = "itb serve"
REFUSED_KEPT = 10_000
HEADER = b"SQLite format 3\x00"
CHECKPOINT_S = 1.0

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS links (name TEXT PRIMARY KEY, rate_bps INTEGER NOT NULL, margin REAL NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
  id TEXT PRIMARY KEY,
  link TEXT NOT NULL,
  volume_bytes INTEGER NOT NULL,
  release_ns INTEGER NOT NULL,
  deadline_ns INTEGER NOT NULL,
  max_rate_bps INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ({", ".join(repr(s) for s in STATES)})),
  reason TEXT,
  plan TEXT,
  expires_ns INTEGER,
  created_ns INTEGER NOT NULL,
  updated_ns INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS requests_link_state ON requests (link, state);
CREATE INDEX IF NOT EXISTS requests_state ON requests (state);
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY REFERENCES requests (id),
  state TEXT NOT NULL CHECK (state IN ({", ".join(repr(s) for s in RUN_STATES)})),
  launched_s REAL,
  finish_s REAL,
  bytes INTEGER,
  reason TEXT,
  dir TEXT,
  updated_s REAL NOT NULL
);
"""
COLUMNS = (
    "requests.rowid, requests.*, runs.state, runs.launched_s, runs.finish_s, runs.bytes, "
    "runs.reason, runs.dir"
)
FROM = "requests LEFT JOIN runs ON runs.id = requests.id"


@dataclass(frozen=True)
class Run:
    """A committed request's transfer on the testbed (`itb serve --execute`)."""

    state: str
    launched_s: float | None = None
    finish_s: float | None = None  # the last byte's arrival (done)
    bytes: int | None = None  # received
    reason: str | None = None
    dir: str | None = None  # its records (the session's job directory)


@dataclass(frozen=True)
class Record:
    request: IntRequest
    state: str
    reason: str | None
    plan: IntPlan | None
    expires_ns: int | None
    created_ns: int
    updated_ns: int
    run: Run | None = None
    seq: int = 0  # the row's order of arrival (a list's cursor)


class StoreError(Exception):
    """The file is not a service store ITB can use (bad input: nothing was written)."""


class StoreUnwritable(Exception):
    """The store cannot be written: read-only, or its disk full (environment)."""


def inspect(path: Path) -> bool:
    """Whether `path` is a store to open (False: a new or empty file, to be made one);
    StoreError if it is anything else. Reads only."""
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a store")
    if not path.exists():
        return False
    if not path.is_file():
        raise StoreError(f"{path} is not a regular file")
    with open(path, "rb") as f:
        head = f.read(len(HEADER))
    if not head:
        return False
    if head != HEADER:
        raise StoreError(f"{path} is not a SQLite database (not a store of `itb serve`)")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
            try:
                meta = dict(db.execute("SELECT key, value FROM meta"))
            except sqlite3.Error:  # (none, or another application's of that name)
                meta = {}
        finally:
            db.close()
    except sqlite3.Error as e:
        raise StoreError(f"{path}: cannot be read as a SQLite database ({e})") from None
    if "format" not in meta or "requests" not in tables:
        raise StoreError(
            f"{path} is a SQLite database of another application (no ITB meta table): "
            "give `itb serve` a store of its own"
        )
    if meta.get("format") != str(FORMAT):
        raise StoreError(
            f"{path}: a store of format {meta.get('format')} (dates in float seconds, by an "
            f"older ITB); this ITB reads format {FORMAT} (integer nanoseconds): serve it with "
            "the ITB that wrote it, or start a new store"
        )
    return True


class Store:
    def __init__(self, path: Path, checkpoints: bool = False) -> None:
        self.path = path
        existing = inspect(path)
        self._local = threading.local()
        self._stop = threading.Event()
        self._sync = threading.Condition()
        self._written = self._synced = 0  # changes written (tickets), made durable
        self._syncing = False
        self._wal_fd: int | None = None
        try:
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA busy_timeout=5000")
            if not existing:
                self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            if checkpoints:
                self.db.execute("PRAGMA wal_autocheckpoint=0")
            with self.transaction(durable=True):
                if not existing:
                    for stmt in SCHEMA.strip().split(";"):
                        if stmt.strip():
                            self.db.execute(stmt)
                    self.db.executemany(
                        "INSERT INTO meta VALUES (?, ?)",
                        [("application", APPLICATION), ("format", str(FORMAT))],
                    )
        except sqlite3.Error as e:
            raise StoreUnwritable(f"{path}: the store cannot be written ({e})") from None
        self.refused = self.db.execute(
            "SELECT COUNT(*) FROM requests WHERE state = 'refused'"
        ).fetchone()[0]
        self._checkpointer = None
        if checkpoints:
            self._checkpointer = threading.Thread(
                target=self._checkpoints, name="checkpoints", daemon=True
            )
            self._checkpointer.start()

    def close(self) -> None:
        self._stop.set()
        if self._checkpointer is not None:
            self._checkpointer.join()
        self.db.close()
        if self._wal_fd is not None:
            os.close(self._wal_fd)

    def written(self) -> int:
        """A ticket for the changes committed so far (called by their one writer)."""
        self._written += 1
        return self._written

    def sync(self, ticket: int) -> None:
        """Returns once the changes of `ticket` are on disk: the WAL fsynced, by this
        thread or by one that started after them (a group commit)."""
        with self._sync:
            while self._synced < ticket:
                if self._syncing:
                    self._sync.wait()
                    continue
                self._syncing, target = True, self._written
                self._sync.release()
                try:
                    os.fsync(self._wal())
                finally:
                    self._sync.acquire()
                    self._syncing = False
                    self._synced = max(self._synced, target)
                    self._sync.notify_all()

    def _wal(self) -> int:
        if self._wal_fd is None:
            try:
                self._wal_fd = os.open(f"{self.path}-wal", os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:  # (nothing in a WAL yet: the database itself)
                fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                return self._wal()
        return self._wal_fd

    def _checkpoints(self) -> None:
        """The WAL copied back into the database once a second, off the requests' path."""
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            while not self._stop.wait(CHECKPOINT_S):
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    pass  # (busy or full: the next one tries again; the WAL keeps it all)
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            db.close()

    @contextmanager
    def transaction(self, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """One transaction; `durable`: on disk when it returns (synchronous=FULL)."""
        if durable:
            self.db.execute("PRAGMA synchronous=FULL")
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        finally:
            if durable:
                self.db.execute("PRAGMA synchronous=NORMAL")

    def reader(self) -> sqlite3.Connection:
        """This thread's own read-only connection (lists read beside the writer)."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            self._local.db = db
        return db

    # links

    def links(self) -> dict[str, tuple[int, float]]:
        """Each link's (rate, margin) as the plans in the store were made for."""
        rows = self.db.execute("SELECT name, rate_bps, margin FROM links").fetchall()
        return {name: (rate, margin) for name, rate, margin in rows}

    def set_link(self, db: sqlite3.Connection, name: str, rate_bps: int, margin: float) -> None:
        db.execute(
            "INSERT INTO links VALUES (?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET rate_bps = ?, margin = ?",
            (name, rate_bps, margin, rate_bps, margin),
        )

    # requests

    def get(self, rid: str) -> Record | None:
        q = f"SELECT {COLUMNS} FROM {FROM} WHERE requests.id = ?"
        row = self.db.execute(q, (rid,)).fetchone()
        return _record(row) if row else None

    def active(self, link: str | None = None) -> list[Record]:
        q = f"SELECT {COLUMNS} FROM {FROM} WHERE requests.state IN ('held', 'committed')"
        rows = (
            self.db.execute(q + " AND link = ? ORDER BY requests.rowid", (link,))
            if link
            else self.db.execute(q + " ORDER BY requests.rowid")
        )
        return [_record(r) for r in rows.fetchall()]

    def all(self) -> list[Record]:
        q = f"SELECT {COLUMNS} FROM {FROM} ORDER BY requests.rowid"
        return [_record(r) for r in self.db.execute(q)]

    def page(self, state: str | None, link: str | None, after: int, limit: int) -> list[Record]:
        """Requests in arrival order after the cursor `after`, filtered, at most `limit`
        (read on this thread's own connection)."""
        where: list[str] = ["requests.rowid > ?"]
        args: list[object] = [after]
        if state is not None:
            where.append("requests.state = ?")
            args.append(state)
        if link is not None:
            where.append("requests.link = ?")
            args.append(link)
        q = f"SELECT {COLUMNS} FROM {FROM} WHERE {' AND '.join(where)} ORDER BY requests.rowid LIMIT ?"
        return [_record(r) for r in self.reader().execute(q, (*args, limit))]

    def set_run(self, db: sqlite3.Connection, rid: str, run: Run, now_s: float) -> None:
        db.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
            "state = excluded.state, launched_s = excluded.launched_s, finish_s = "
            "excluded.finish_s, bytes = excluded.bytes, reason = excluded.reason, "
            "dir = excluded.dir, updated_s = excluded.updated_s",
            (rid, run.state, run.launched_s, run.finish_s, run.bytes, run.reason, run.dir, now_s),
        )

    def interrupt_runs(self, now_s: float) -> list[str]:
        """Runs still `launched` (the service that ran them stopped): interrupted."""
        with self.transaction(durable=True) as db:
            ids = [r[0] for r in db.execute("SELECT id FROM runs WHERE state = 'launched'")]
            db.execute(
                "UPDATE runs SET state = 'interrupted', updated_s = ?, reason = "
                "'the service stopped while it ran' WHERE state = 'launched'",
                (now_s,),
            )
        return ids

    def count(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT state, COUNT(*) FROM requests GROUP BY state"))

    def insert(self, db: sqlite3.Connection, rec: Record) -> int:
        """The record written; its place in arrival order (the list's cursor)."""
        r = rec.request
        cur = db.execute(
            "INSERT INTO requests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (r.id, r.link, r.volume_bytes, r.release_ns, r.deadline_ns, r.max_rate_bps,
             rec.state, rec.reason, _plan(rec.plan), rec.expires_ns, rec.created_ns,
             rec.updated_ns),
        )  # fmt: skip
        if rec.state == "refused":
            self.refused += 1
            if self.refused > REFUSED_KEPT + REFUSED_KEPT // 10:  # the oldest tenth goes
                db.execute(
                    "DELETE FROM requests WHERE rowid IN (SELECT rowid FROM requests WHERE "
                    "state = 'refused' ORDER BY rowid LIMIT ?)",
                    (self.refused - REFUSED_KEPT,),
                )
                self.refused = REFUSED_KEPT
        return cur.lastrowid or 0

    def update(self, db: sqlite3.Connection, rid: str, state: str, now_ns: int, **kw) -> None:
        sets = {"state": state, "updated_ns": now_ns}
        if "reason" in kw:
            sets["reason"] = kw["reason"]
        if "plan" in kw:
            sets["plan"] = _plan(kw["plan"])
        if "expires_ns" in kw:
            sets["expires_ns"] = kw["expires_ns"]
        cols = ", ".join(f"{k} = ?" for k in sets)
        db.execute(f"UPDATE requests SET {cols} WHERE id = ?", (*sets.values(), rid))


def _plan(plan: IntPlan | None) -> str | None:
    return None if plan is None else json.dumps([list(s) for s in plan.segments])


def _record(row: tuple) -> Record:
    seq, rid, link, vol, rt, dt, mr, state, reason, plan, expires, created, updated = row[:13]
    p = IntPlan(rid, tuple(tuple(s) for s in json.loads(plan))) if plan else None
    run = Run(*row[13:]) if row[13] is not None else None
    return Record(
        IntRequest(rid, link, vol, rt, dt, mr), state, reason, p, expires, created, updated,
        run, seq,
    )  # fmt: skip
