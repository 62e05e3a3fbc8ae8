"""A link's held and committed records, indexed for its schedule: by start and by finish,
kept sorted as records change (itb.service.ledger), so that a reader takes the plans of
a window — those that end after `a` and start before `b`, by start, the first `limit` —
in time proportional to what it takes, whatever the number of plans.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable

from itb.service.store import ACTIVE, Record


def _key(rec: Record) -> tuple[int, int, str]:
    assert rec.plan is not None
    return (rec.plan.start_ns, rec.seq, rec.request.id)


class Active:
    def __init__(self) -> None:
        self.recs: dict[str, Record] = {}
        self.starts: list[tuple[int, int, str]] = []
        self.ends: list[int] = []

    def put(self, rec: Record) -> None:
        """A record's new state: kept if held or committed, dropped otherwise."""
        rid = rec.request.id
        self.drop(rid)
        if rec.state in ACTIVE:
            self.recs[rid] = rec
            if rec.plan is not None:
                insort(self.starts, _key(rec))
                insort(self.ends, rec.plan.finish_ns)

    def drop(self, rid: str) -> None:
        old = self.recs.pop(rid, None)
        if old is not None and old.plan is not None:
            del self.starts[bisect_left(self.starts, _key(old))]
            del self.ends[bisect_left(self.ends, old.plan.finish_ns)]

    def window(self, a: int, b: int | None, limit: int) -> tuple[list[Record], int]:
        """The plans that end after a and start before b (None: whenever), by start: the
        first `limit`, and how many there are (those starting before b less those that
        ended by a)."""
        if b is not None and b <= a:
            return [], 0
        starting = len(self.starts) if b is None else bisect_left(self.starts, (b,))
        total = starting - bisect_right(self.ends, a)
        chosen = []
        for _, _, rid in self.starts[:starting]:
            rec = self.recs[rid]
            if rec.plan is not None and rec.plan.finish_ns > a:
                chosen.append(rec)
                if len(chosen) == limit:
                    break
        return chosen, total

    def forget(self, before: int, may: Callable[[Record], bool]) -> None:
        """Drops the records whose plans ended before `before` that `may` lets go: they
        stay in the store, they no longer weigh on the schedule's readers."""
        for rec in list(self.recs.values()):
            if rec.plan is not None and rec.plan.finish_ns < before and may(rec):
                self.drop(rec.request.id)
