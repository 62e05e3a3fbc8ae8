"""The service's store: requests and their plans in SQLite (WAL, synchronous=FULL).

One row per request, whatever its state; a change is one transaction, committed whole or
not at all (a process killed mid-write leaves the previous state: SQLite's journal). The
links' rates and margins are stored too, so that a restart with another capacity
re-plans.

States: held (a quote with a plan, until `expires`), committed, refused (no plan, with the
reason), cancelled, expired (a hold not committed in time), broken (a commitment a
capacity change could not keep, with the reason).

With `itb serve --execute`, a committed request's transfer on the testbed is recorded in
`runs` (one row per request, created when it is launched): launched, done (every byte
arrived; `finish_s` is the last byte's date), failed (with the reason), interrupted (the
service stopped while it ran: a restart finds it so), missed (never launched: the service
was not executing when its start came). The table is new in this format's stores and
created in older ones when they are opened.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from itb.service.model import Plan, Request

STATES = ("held", "committed", "refused", "cancelled", "expired", "broken")
ACTIVE = ("held", "committed")  # the states whose plans use the link
RUN_STATES = ("launched", "done", "failed", "interrupted", "missed")
FORMAT = 1

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS links (name TEXT PRIMARY KEY, rate_bps REAL NOT NULL, margin REAL NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
  id TEXT PRIMARY KEY,
  link TEXT NOT NULL,
  volume_bytes INTEGER NOT NULL,
  release_s REAL NOT NULL,
  deadline_s REAL NOT NULL,
  max_rate_bps REAL NOT NULL,
  state TEXT NOT NULL CHECK (state IN ({", ".join(repr(s) for s in STATES)})),
  reason TEXT,
  profile TEXT,
  expires_s REAL,
  created_s REAL NOT NULL,
  updated_s REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS requests_link_state ON requests (link, state);
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
    "requests.*, runs.state, runs.launched_s, runs.finish_s, runs.bytes, runs.reason, runs.dir"
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
    request: Request
    state: str
    reason: str | None
    plan: Plan | None
    expires_s: float | None
    created_s: float
    updated_s: float
    run: Run | None = None


class StoreError(Exception):
    """The database is not a service store ITB can use."""


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA busy_timeout=5000")
        with self.transaction():
            for stmt in SCHEMA.strip().split(";"):
                if stmt.strip():
                    self.db.execute(stmt)
            row = self.db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if row is None:
                self.db.execute("INSERT INTO meta VALUES ('format', ?)", (str(FORMAT),))
            elif row[0] != str(FORMAT):
                raise StoreError(f"{path}: a store of format {row[0]}, this ITB reads {FORMAT}")

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # links

    def links(self) -> dict[str, tuple[float, float]]:
        """Each link's (rate, margin) as the plans in the store were made for."""
        rows = self.db.execute("SELECT name, rate_bps, margin FROM links").fetchall()
        return {name: (rate, margin) for name, rate, margin in rows}

    def set_link(self, db: sqlite3.Connection, name: str, rate_bps: float, margin: float) -> None:
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

    def set_run(self, db: sqlite3.Connection, rid: str, run: Run, now: float) -> None:
        db.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
            "state = excluded.state, launched_s = excluded.launched_s, finish_s = "
            "excluded.finish_s, bytes = excluded.bytes, reason = excluded.reason, "
            "dir = excluded.dir, updated_s = excluded.updated_s",
            (rid, run.state, run.launched_s, run.finish_s, run.bytes, run.reason, run.dir, now),
        )

    def interrupt_runs(self, now: float) -> list[str]:
        """Runs still `launched` (the service that ran them stopped): interrupted."""
        with self.transaction() as db:
            ids = [r[0] for r in db.execute("SELECT id FROM runs WHERE state = 'launched'")]
            db.execute(
                "UPDATE runs SET state = 'interrupted', updated_s = ?, reason = "
                "'the service stopped while it ran' WHERE state = 'launched'",
                (now,),
            )
        return ids

    def count(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT state, COUNT(*) FROM requests GROUP BY state"))

    def insert(self, db: sqlite3.Connection, rec: Record) -> None:
        r = rec.request
        db.execute(
            "INSERT INTO requests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (r.id, r.link, r.volume_bytes, r.release_s, r.deadline_s, r.max_rate_bps,
             rec.state, rec.reason, _profile(rec.plan), rec.expires_s, rec.created_s,
             rec.updated_s),
        )  # fmt: skip

    def update(self, db: sqlite3.Connection, rid: str, state: str, now: float, **kw) -> None:
        sets = {"state": state, "updated_s": now}
        if "reason" in kw:
            sets["reason"] = kw["reason"]
        if "plan" in kw:
            sets["profile"] = _profile(kw["plan"])
        if "expires_s" in kw:
            sets["expires_s"] = kw["expires_s"]
        cols = ", ".join(f"{k} = ?" for k in sets)
        db.execute(f"UPDATE requests SET {cols} WHERE id = ?", (*sets.values(), rid))


def _profile(plan: Plan | None) -> str | None:
    return None if plan is None else json.dumps(plan.profile())


def _record(row: tuple) -> Record:
    rid, link, vol, rt, dt, mr, state, reason, profile, expires, created, updated = row[:12]
    plan = Plan.of_profile(rid, [tuple(p) for p in json.loads(profile)]) if profile else None
    run = Run(*row[12:]) if row[12] is not None else None
    return Record(
        Request(rid, vol, rt, dt, mr, link), state, reason, plan, expires, created, updated, run
    )
