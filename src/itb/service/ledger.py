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

A service that runs its plans on a testbed (`itb serve --execute`) plans every request
from `lead_s` after now (the time its transfer needs to be launched) and to `guard_s`
before its deadline (its last byte arrives after the plan's: RTTs); a request whose
transfer was launched keeps its whole plan through a re-plan (the sender has it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from itb.service.model import Plan, Request, Segment, merged
from itb.service.store import Record, Run, Store
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
        self,
        store: Store,
        links: list[LinkSpec],
        margin: float,
        hold_s: float,
        now: float,
        lead_s: float = 0.0,
        guard_s: float = 0.0,
        launch_s: float = 0.0,
    ):
        """`launch_s`: a commit must come this long before its plan's start at least
        (its transfer is launched then); 0: no testbed, any time."""
        self.store, self.margin, self.hold_s = store, margin, hold_s
        self.lead_s, self.guard_s, self.launch_s = lead_s, guard_s, launch_s
        # ids whose transfer was launched: their plans no longer move
        self.launched: set[str] = {r.request.id for r in store.all() if r.run is not None}
        self.on_cancel: Callable[[str], None] | None = None  # a launched request cancelled
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
            start, end = max(req.release_s, now + self.lead_s), req.deadline_s - self.guard_s
            if end <= start:
                reason = (
                    "the deadline has passed"
                    if req.deadline_s <= now
                    else f"the window ends before a transfer can run: plans start {self.lead_s:g} s "
                    f"after now and end {self.guard_s:g} s before the deadline"
                )
            else:
                segs = usage.fill_early(cap, start, end, req.max_rate_bps, req.bits)
                if segs is None:
                    reason = _refusal(usage, cap, req, start, end)
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
            if self.launch_s and rec.plan and rec.plan.start - now < self.launch_s:
                raise Conflict(
                    f"request {rid!r}: its plan starts in {rec.plan.start - now:.1f} s and its "
                    f"transfer must be launched {self.launch_s:.1f} s before: too late to "
                    "commit this quote, ask for another"
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
            rec = self._get(rid)
        if rid in self.launched and self.on_cancel is not None:
            self.on_cancel(rid)  # (its transfer stopped; what it became is recorded then)
        return rec

    def get(self, rid: str, now: float) -> Record:
        with self.lock:
            self.expire(now)
            return self._get(rid)

    def due(self, until: float) -> list[Record]:
        """Committed requests not launched whose plans start by `until`."""
        with self.lock:
            return [
                r
                for r in self.store.active()
                if r.state == "committed"
                and r.plan
                and r.request.id not in self.launched
                and r.plan.start <= until
            ]

    def claim(self, rid: str) -> bool:
        """Whether the request is still committed and not launched; if so, from now on
        it is launched (its plan no longer moves; a cancel stops its transfer)."""
        with self.lock:
            rec = self.store.get(rid)
            if rec is None or rec.state != "committed" or rid in self.launched:
                return False
            self.launched.add(rid)
            return True

    def ran(self, rid: str, run: Run, now: float) -> None:
        """Records what became of a committed request's transfer (launched, done, …)."""
        with self.lock:
            with self.store.transaction() as db:
                self.store.set_run(db, rid, run, now)
            self.launched.add(rid)

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
        recs.sort(key=lambda r: r.request.id not in self.launched)  # (stable)
        for r in recs:
            segs = r.plan.segments if r.plan else ()
            # what cannot move: what ran, what is about to be launched, a launched plan
            cut = now + self.lead_s if r.request.id not in self.launched else float("inf")
            past, future = _split(segs, cut), _split(segs, cut, after=True)
            coming = _split(past, now, after=True)  # of it, what still takes capacity
            usage.add(coming)
            if not _fits(usage, future, cap):
                req = r.request
                left = req.bits - sum((b - a) * x for a, b, x in past)
                start, end = max(cut, req.release_s), req.deadline_s - self.guard_s
                again = (
                    usage.fill_early(cap, start, end, req.max_rate_bps, left)
                    if end > start
                    else None
                )
                if again is None:
                    usage.remove(coming)
                    broken.append(req.id)
                    continue
                future = again
            usage.add(future)
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


def _refusal(usage: Usage, cap: float, req: Request, start: float, end: float) -> str:
    alone = req.bits / min(req.max_rate_bps, cap)
    if start + alone > end:
        return (
            f"the volume needs {alone:.3f} s at min(max-rate, capacity) and the window "
            f"leaves {end - start:.3f} s"
        )
    free = sum(
        (b - a) * min(req.max_rate_bps, max(0.0, cap - u)) for a, b, u in usage.pieces(start, end)
    )
    return (
        f"the link's free capacity in the window carries {free / 8:.0f} of the "
        f"{req.volume_bytes} bytes (held and committed plans use the rest)"
    )
