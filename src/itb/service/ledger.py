"""The service's logic: quote → hold → commit → cancel on links whose plans are in the store.

Each link keeps the sum of its held and committed plans in memory (`Usage`), rebuilt from
the store when the service starts and changed only after the store's transaction
commits. One lock serialises the changes: a quote sees every plan before it.

A new request is admitted exactly against what is already promised: it gets a plan if
its volume fits, at up to max-rate, in the capacity the link's held and committed plans
leave between max(release, now) and its deadline, placed as early as it fits. Promised
plans never move for a newcomer (a quote stays what it said). A capacity change (a new
rate, or a restart with another rate or margin) re-plans: each promise, committed ones first in the order they were made, keeps its plan
if it still fits, is placed again from now otherwise, and is broken (state `broken`, the
reason given) if it no longer fits at all.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from itb.service.model import Plan, Request, Segment, merged
from itb.service.store import Record, Store
from itb.service.usage import Usage


class NotFound(Exception):
    pass


class Conflict(Exception):
    """The request's id is taken by another request, or its state forbids the change."""


@dataclass(frozen=True)
class LinkSpec:
    name: str
    rate_bps: float


class Ledger:
    def __init__(
        self, store: Store, links: list[LinkSpec], margin: float, hold_s: float, now: float
    ):
        self.store, self.margin, self.hold_s = store, margin, hold_s
        self.lock = threading.Lock()
        self.rate: dict[str, float] = {}
        self.usage: dict[str, Usage] = {}
        # held requests' expiry and plan, so that expiring needs no read of the store
        self.holds: dict[str, tuple[float, str, Plan | None]] = {
            r.request.id: (r.expires_s or 0.0, r.request.link, r.plan)
            for r in store.active()
            if r.state == "held"
        }
        self.broken_at_start: dict[str, list[str]] = {}
        stored = store.links()
        for link in links:
            self.rate[link.name] = link.rate_bps
            self.usage[link.name] = Usage(r.plan for r in store.active(link.name) if r.plan)
        with self.lock:
            self.expire(now)
            for link in links:
                if link.name not in stored:
                    with store.transaction() as db:
                        store.set_link(db, link.name, link.rate_bps, margin)
                elif stored[link.name] != (link.rate_bps, margin):
                    self.broken_at_start[link.name] = self._replan(link.name, link.rate_bps, now)

    def capacity(self, link: str) -> float:
        return self.rate[link] * (1 - self.margin)

    def expire(self, now: float) -> None:
        """Holds whose time ran out release their capacity (the lock is held)."""
        gone = [rid for rid, (exp, _, _) in self.holds.items() if exp <= now]
        if not gone:
            return
        with self.store.transaction() as db:
            for rid in gone:
                self.store.update(
                    db, rid, "expired", now, reason="the hold expired before a commit"
                )
        for rid in gone:
            _, link, plan = self.holds.pop(rid)
            if plan and link in self.usage:
                self.usage[link].remove(plan.segments)

    def quote(self, req: Request, now: float) -> tuple[Record, bool]:
        """(the record, whether it is new). The same id with the same request answers what
        the first one got; with another request it is a Conflict."""
        with self.lock:
            self.expire(now)
            old = self.store.get(req.id)
            if old is not None:
                if old.request != req:
                    raise Conflict(f"request id {req.id!r} is already used by another request")
                return old, False
            usage, cap = self.usage[req.link], self.capacity(req.link)
            plan, reason = None, None
            start = max(req.release_s, now)
            if req.deadline_s <= now:
                reason = "the deadline has passed"
            else:
                segs = usage.fill_early(cap, start, req.deadline_s, req.max_rate_bps, req.bits)
                if segs is None:
                    reason = _refusal(usage, cap, req, start)
                else:
                    plan = Plan(req.id, segs)
            rec = Record(
                req, "held" if plan else "refused", reason, plan,
                now + self.hold_s if plan else None, now, now,
            )  # fmt: skip
            with self.store.transaction() as db:
                self.store.insert(db, rec)
            if plan:
                usage.add(plan.segments)
                self.holds[req.id] = (now + self.hold_s, req.link, plan)
            return rec, True

    def commit(self, rid: str, now: float) -> Record:
        with self.lock:
            self.expire(now)
            rec = self._get(rid)
            if rec.state == "committed":
                return rec
            if rec.state != "held":
                raise Conflict(
                    f"request {rid!r} is {rec.state}: only a held request can be committed"
                )
            with self.store.transaction() as db:
                self.store.update(db, rid, "committed", now, expires_s=None)
            self.holds.pop(rid, None)
            return self._get(rid)

    def cancel(self, rid: str, now: float) -> Record:
        with self.lock:
            self.expire(now)
            rec = self._get(rid)
            if rec.state not in ("held", "committed"):
                return rec
            with self.store.transaction() as db:
                self.store.update(db, rid, "cancelled", now)
            self.holds.pop(rid, None)
            if rec.plan:
                self.usage[rec.request.link].remove(rec.plan.segments)
            return self._get(rid)

    def get(self, rid: str, now: float) -> Record:
        with self.lock:
            self.expire(now)
            return self._get(rid)

    def promises(self, link: str, now: float) -> tuple[list[Record], float]:
        """The link's held and committed requests, and its rate, as of now."""
        with self.lock:
            self.expire(now)
            return self.store.active(link), self.rate[link]

    def set_capacity(self, link: str, rate_bps: float, now: float) -> list[str]:
        with self.lock:
            self.expire(now)
            return self._replan(link, rate_bps, now)

    def _get(self, rid: str) -> Record:
        rec = self.store.get(rid)
        if rec is None:
            raise NotFound(rid)
        return rec

    def _replan(self, link: str, rate_bps: float, now: float) -> list[str]:
        """Every promise on `link` placed again under the new capacity; the broken ones'
        ids. One transaction: the store holds the old plans or all the new ones."""
        cap = rate_bps * (1 - self.margin)
        recs = sorted(self.store.active(link), key=lambda r: (r.state != "committed", r.updated_s))
        usage = Usage()
        new: dict[str, Plan] = {}
        broken: list[str] = []
        for r in recs:
            segs = r.plan.segments if r.plan else ()
            past, future = _split(segs, now), _split(segs, now, after=True)
            if not _fits(usage, future, cap):
                req = r.request
                left = req.bits - sum((b - a) * x for a, b, x in past)
                start = max(now, req.release_s)
                again = usage.fill_early(cap, start, req.deadline_s, req.max_rate_bps, left)
                if again is None:
                    broken.append(req.id)
                    continue
                future = again
            usage.add(future)  # what ran before now is done: only the future takes capacity
            new[r.request.id] = Plan(r.request.id, merged(list(past) + list(future)))
        with self.store.transaction() as db:
            self.store.set_link(db, link, rate_bps, self.margin)
            for r in recs:
                rid = r.request.id
                if rid in broken:
                    self.store.update(
                        db,
                        rid,
                        "broken",
                        now,
                        reason=f"the link's capacity became {rate_bps:.0f} bit/s",
                    )
                elif new[rid] != r.plan:
                    self.store.update(db, rid, r.state, now, plan=new[rid])
        self.rate[link] = rate_bps
        self.usage[link] = usage
        for rid in list(self.holds):
            if rid in broken:
                del self.holds[rid]
            elif rid in new:
                self.holds[rid] = (self.holds[rid][0], link, new[rid])
        return broken


def _fits(usage: Usage, segs, cap: float) -> bool:
    return all(
        used + x <= cap * (1 + 1e-9) for a, b, x in segs for _, _, used in usage.pieces(a, b)
    )


def _split(segs, at: float, after: bool = False) -> tuple[Segment, ...]:
    """The part of a plan before `at` (or from `at` on)."""
    if after:
        return tuple((max(a, at), b, x) for a, b, x in segs if b > at)
    return tuple((a, min(b, at), x) for a, b, x in segs if a < at)


def _refusal(usage: Usage, cap: float, req: Request, start: float) -> str:
    alone = req.bits / min(req.max_rate_bps, cap)
    if start + alone > req.deadline_s:
        return (
            f"the volume needs {alone:.3f} s at min(max-rate, capacity) and the window "
            f"leaves {req.deadline_s - start:.3f} s"
        )
    free = sum(
        (b - a) * min(req.max_rate_bps, max(0.0, cap - u))
        for a, b, u in usage.pieces(start, req.deadline_s)
    )
    return (
        f"the link's free capacity in the window carries {free / 8:.0f} of the "
        f"{req.volume_bytes} bytes (held and committed plans use the rest)"
    )
