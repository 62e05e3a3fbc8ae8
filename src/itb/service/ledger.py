"""The service's logic: quote → hold → commit → cancel on links whose plans are in the store.

Each link keeps the sum of its held and committed plans in memory (`Usage`, in integers:
itb.service.intplan), and its held and committed records, rebuilt from the store when
the service starts and changed only after the store's transaction commits. One lock
serialises the changes: a quote sees every plan before it. Readers (a link's schedule)
take a snapshot of the records under the lock and do the rest without it.

A new request is admitted exactly against what is already promised: it gets a plan if
its whole volume fits, at up to max-rate, in the capacity the link's held and committed
plans leave between max(release, now) and its deadline, placed as early as it fits.
Promised plans never move for a newcomer (a quote stays what it said). A capacity change
(a new rate, or a restart with another rate or margin) re-plans (itb.service.replan).

A service that runs its plans on a testbed (`itb serve --execute`) plans every request
from `lead_s` after now (the time its transfer needs to be launched) and to `guard_s`
before its deadline (its last byte arrives after the plan's: RTTs); a request whose
transfer was launched keeps its whole plan through a re-plan (the sender has it).

Dates are integer nanoseconds since the Unix epoch (`now` included), rates bit/s.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace

from itb.service import replan
from itb.service.intplan import NS, IntPlan, IntRequest, fill_early, free_bit_ns, planning_cap
from itb.service.schedule import Active
from itb.service.store import Record, Run, Store
from itb.service.usage import Usage

FORGET_NS = 3600 * NS  # plans ended this long ago leave the schedule's index


class NotFound(Exception):
    pass


class Conflict(Exception):
    """The request's id is taken by another request, or its state forbids the change."""


@dataclass(frozen=True)
class LinkSpec:
    name: str
    rate_bps: int


class Ledger:
    def __init__(
        self,
        store: Store,
        links: list[LinkSpec],
        margin: float,
        hold_s: float,
        now: int,
        lead_s: float = 0.0,
        guard_s: float = 0.0,
        launch_s: float = 0.0,
    ):
        """`launch_s`: a commit must come this long before its plan's start at least
        (its transfer is launched then); 0: no testbed, any time."""
        self.store, self.margin = store, margin
        self.hold_ns, self.lead_ns = round(hold_s * NS), round(lead_s * NS)
        self.guard_ns, self.launch_ns = round(guard_s * NS), round(launch_s * NS)
        # ids whose transfer was launched: their plans no longer move
        self.launched: set[str] = {r.request.id for r in store.all() if r.run is not None}
        self.on_cancel: Callable[[str], None] | None = None  # a launched request cancelled
        self.lock = threading.Lock()
        self.now = now  # the latest now given (expire)
        self.forgot = now
        self.rate: dict[str, int] = {}
        self.usage: dict[str, Usage] = {}
        self.active: dict[str, Active] = {}  # per link: held and committed
        self.version: dict[str, int] = {}  # per link: changes so far (readers' caches)
        # held requests' expiry, so that expiring needs no read of the store
        self.holds: dict[str, int] = {}
        self.broken_at_start: dict[str, list[str]] = {}
        stored = store.links()
        active = store.active()
        for link in links:
            self.rate[link.name] = link.rate_bps
            mine = [r for r in active if r.request.link == link.name]
            self.active[link.name] = Active()
            self.usage[link.name] = Usage()
            for r in mine:
                self.active[link.name].put(r)
                if r.plan:
                    self.usage[link.name].add(r.plan.segments)
            self.version[link.name] = 0
        for r in active:
            if r.state == "held" and r.request.link in self.rate:
                self.holds[r.request.id] = r.expires_ns or 0
        with self.lock:
            now = self.expire(now)
            for link in links:
                if link.name not in stored:
                    with store.transaction(durable=True) as db:
                        store.set_link(db, link.name, link.rate_bps, margin)
                elif stored[link.name] != (link.rate_bps, margin):
                    self.broken_at_start[link.name] = self._replan(link.name, link.rate_bps, now)

    def capacity(self, link: str) -> int:
        return planning_cap(self.rate[link], self.margin)

    def _changed(self, rec: Record) -> None:
        """A record's new state in the links' active sets (the lock is held)."""
        self.active[rec.request.link].put(rec)
        self.version[rec.request.link] += 1

    def expire(self, now: int) -> int:
        """Holds whose time ran out release their capacity; the past is forgotten by each
        link's usage (the lock is held). Returns the ledger's now: never earlier than a
        now it was given before (requests read the clock before they take the lock, so
        one may come with a now older than the previous one's: planning from it would
        use capacity of the past the usage has forgotten)."""
        now = self.now = max(self.now, now)
        for u in self.usage.values():
            u.prune(now)
        if now - self.forgot > FORGET_NS // 60:  # once a minute: plans ended an hour ago
            self.forgot = now
            for a in self.active.values():
                a.forget(
                    now - FORGET_NS, lambda r: not self.launch_ns or r.request.id in self.launched
                )
        gone = [rid for rid, exp in self.holds.items() if exp <= now]
        if not gone:
            return now
        recs = [self.store.get(rid) for rid in gone]
        with self.store.transaction() as db:
            for rid in gone:
                self.store.update(
                    db, rid, "expired", now, reason="the hold expired before a commit"
                )
        for rid, rec in zip(gone, recs):
            del self.holds[rid]
            if rec is None:
                continue
            if rec.plan and rec.request.link in self.usage:
                self.usage[rec.request.link].remove(rec.plan.segments)
            self._changed(replace(rec, state="expired", updated_ns=now))
        return now

    def quote(self, req: IntRequest, now: int) -> tuple[Record, bool]:
        """(the record, whether it is new). The same id with the same request answers what
        the first one got; with another request it is a Conflict."""
        with self.lock:
            now = self.expire(now)
            old = self.store.get(req.id)
            if old is not None:
                if old.request != req:
                    raise Conflict(f"request id {req.id!r} is already used by another request")
                return old, False
            usage, cap = self.usage[req.link], self.capacity(req.link)
            plan, reason = None, None
            start, end = max(req.release_ns, now + self.lead_ns), req.deadline_ns - self.guard_ns
            if end <= start:
                reason = (
                    "the deadline has passed"
                    if req.deadline_ns <= now
                    else f"the window ends before a transfer can run: plans start "
                    f"{self.lead_ns / NS:g} s after now and end {self.guard_ns / NS:g} s "
                    "before the deadline"
                )
            else:
                segs = fill_early(usage, cap, start, end, req.max_rate_bps, req.bit_ns)
                if segs is None:
                    reason = _refusal(usage, cap, req, start, end)
                else:
                    plan = IntPlan(req.id, segs)
            rec = Record(
                req, "held" if plan else "refused", reason, plan,
                now + self.hold_ns if plan else None, now, now,
            )  # fmt: skip
            with self.store.transaction() as db:
                rec = replace(rec, seq=self.store.insert(db, rec))
            if plan:
                usage.add(plan.segments)
                self.holds[req.id] = now + self.hold_ns
                self._changed(rec)
            return rec, True

    def commit(self, rid: str, now: int) -> Record:
        with self.lock:
            now = self.expire(now)
            rec = self._get(rid)
            if rec.state == "committed":
                return rec
            if rec.state != "held":
                raise Conflict(
                    f"request {rid!r} is {rec.state}: only a held request can be committed"
                )
            if self.launch_ns and rec.plan and rec.plan.start_ns - now < self.launch_ns:
                raise Conflict(
                    f"request {rid!r}: its plan starts in {(rec.plan.start_ns - now) / NS:.1f} s "
                    f"and its transfer must be launched {self.launch_ns / NS:.1f} s before: too "
                    "late to commit this quote, ask for another"
                )
            with self.store.transaction() as db:
                self.store.update(db, rid, "committed", now, expires_ns=None)
            ticket = self.store.written()
            self.holds.pop(rid, None)
            rec = self._get(rid)
            self._changed(rec)
        self.store.sync(ticket)  # (on disk before it is answered; outside the lock)
        return rec

    def cancel(self, rid: str, now: int) -> Record:
        with self.lock:
            now = self.expire(now)
            rec = self._get(rid)
            if rec.state not in ("held", "committed"):
                return rec
            with self.store.transaction() as db:
                self.store.update(db, rid, "cancelled", now)
            ticket = self.store.written()
            self.holds.pop(rid, None)
            if rec.plan:
                self.usage[rec.request.link].remove(rec.plan.segments)
            rec = self._get(rid)
            self._changed(rec)
        self.store.sync(ticket)
        if rid in self.launched and self.on_cancel is not None:
            self.on_cancel(rid)  # (its transfer stopped; what it became is recorded then)
        return rec

    def tick(self, now: int) -> None:
        """Holds past their time expired, the past forgotten."""
        with self.lock:
            now = self.expire(now)

    def get(self, rid: str, now: int) -> Record:
        with self.lock:
            now = self.expire(now)
            return self._get(rid)

    def due(self, until: int) -> list[Record]:
        """Committed requests not launched whose plans start by `until`."""
        with self.lock:
            return sorted(
                (
                    r
                    for a in self.active.values()
                    for r in a.recs.values()
                    if r.state == "committed"
                    and r.plan
                    and r.request.id not in self.launched
                    and r.plan.start_ns <= until
                ),
                key=lambda r: r.seq,
            )

    def claim(self, rid: str) -> bool:
        """Whether the request is still committed and not launched; if so, from now on
        it is launched (its plan no longer moves; a cancel stops its transfer)."""
        with self.lock:
            rec = self.store.get(rid)
            if rec is None or rec.state != "committed" or rid in self.launched:
                return False
            self.launched.add(rid)
            return True

    def ran(self, rid: str, run: Run, now_s: float) -> None:
        """Records what became of a committed request's transfer (launched, done, …)."""
        with self.lock:
            with self.store.transaction() as db:
                self.store.set_run(db, rid, run, now_s)
            ticket = self.store.written()
            self.launched.add(rid)
            rec = self.store.get(rid)
            if rec is not None and rec.request.link in self.active:
                self._changed(rec)
        self.store.sync(ticket)

    def window(
        self, link: str, now: int, a: int | None, b: int | None, limit: int
    ) -> tuple[list[Record], int, list[list[int]], int]:
        """The link's plans that end after a (None: now) and start before b, by start (the
        first `limit`), how many there are, its allocated rate from a to b or to the last
        of these plans' finish ([[date ns, bit/s], …], at most 4 · limit + 2 steps), and
        the ledger's now."""
        with self.lock:
            now = self.expire(now)
            a = now if a is None else a
            chosen, total = self.active[link].window(a, b, limit)
            end = (
                b if b is not None else max((r.plan.finish_ns for r in chosen if r.plan), default=a)
            )
            u = self.usage[link]
            i = max(0, bisect_right(u.t, a) - 1)
            j = min(bisect_right(u.t, end), i + 4 * limit + 2)
            return chosen, total, [[t, v] for t, v in zip(u.t[i:j], u.v[i:j])], now

    def set_capacity(self, link: str, rate_bps: int, now: int) -> list[str]:
        with self.lock:
            now = self.expire(now)
            broken = self._replan(link, rate_bps, now)
            ticket = self.store.written()
        self.store.sync(ticket)
        return broken

    def _get(self, rid: str) -> Record:
        rec = self.store.get(rid)
        if rec is None:
            raise NotFound(rid)
        return rec

    def _replan(self, link: str, rate_bps: int, now: int) -> list[str]:
        """Every promise on `link` placed again under the new capacity (itb.service.replan);
        the broken ones' ids."""
        recs = self.store.active(link)
        cap = planning_cap(rate_bps, self.margin)
        new, broken, usage = replan.replan(
            recs, cap, now, self.lead_ns, self.guard_ns, self.launched
        )
        reason = f"the link's capacity became {rate_bps} bit/s"
        with self.store.transaction(durable=True) as db:
            self.store.set_link(db, link, rate_bps, self.margin)
            for r in recs:
                rid = r.request.id
                if rid in broken:
                    self.store.update(db, rid, "broken", now, reason=reason)
                elif new[rid] != r.plan:
                    self.store.update(db, rid, r.state, now, plan=new[rid])
        self.rate[link] = rate_bps
        self.usage[link] = usage
        usage.prune(now)
        for r in recs:
            rec = self.store.get(r.request.id)
            if rec is not None:
                self._changed(rec)
            if r.request.id in broken:
                self.holds.pop(r.request.id, None)
        return broken


def _refusal(usage: Usage, cap: int, req: IntRequest, start: int, end: int) -> str:
    alone_ns = req.bit_ns / min(req.max_rate_bps, cap) if cap > 0 else float("inf")
    if start + alone_ns > end:
        return (
            f"the volume needs {alone_ns / NS:.3f} s at min(max-rate, capacity) and the window "
            f"leaves {(end - start) / NS:.3f} s"
        )
    free = free_bit_ns(usage, cap, start, end, req.max_rate_bps) // (8 * NS)
    return (
        f"the link's free capacity in the window carries {free} of the "
        f"{req.volume_bytes} bytes (held and committed plans use the rest)"
    )
