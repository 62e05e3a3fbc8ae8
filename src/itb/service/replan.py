"""A capacity change on a link (a new rate, or a restart with another rate or margin):
each promise, committed ones first in the order they were made, keeps its plan if its
future still fits, is placed again from now otherwise, and is broken if it no longer fits
at all. What ran before now is not re-checked; what starts within `lead` of now does not
move (its transfer is being launched), nor does anything of a launched plan (the sender
has it). Integer dates (ns) and rates (bit/s), as in itb.service.intplan.
"""

from __future__ import annotations

from itb.service.intplan import IntPlan, IntSegment, fill_early, joined
from itb.service.store import Record
from itb.service.usage import Usage

FOREVER = 1 << 126  # a date after every plan's


def replan(
    recs: list[Record], cap: int, now: int, lead_ns: int, guard_ns: int, launched: set[str]
) -> tuple[dict[str, IntPlan], list[str], Usage]:
    """Each kept promise's new plan, the broken ones' ids, and the link's new usage."""
    order = sorted(recs, key=lambda r: (r.state != "committed", r.updated_ns))
    order.sort(key=lambda r: r.request.id not in launched)  # (stable)
    usage = Usage()
    new: dict[str, IntPlan] = {}
    broken: list[str] = []
    for r in order:
        segs = r.plan.segments if r.plan else ()
        cut = now + lead_ns if r.request.id not in launched else FOREVER
        past, future = split(segs, cut), split(segs, cut, after=True)
        coming = split(past, now, after=True)  # of it, what still takes capacity
        usage.add(coming)
        if not fits(usage, future, cap):
            req = r.request
            left = req.bit_ns - sum((b - a) * x for a, b, x in past)
            start, end = max(cut, req.release_ns), req.deadline_ns - guard_ns
            again = (
                fill_early(usage, cap, start, end, req.max_rate_bps, left) if end > start else None
            )
            if again is None:
                usage.remove(coming)
                broken.append(req.id)
                continue
            future = again
        usage.add(future)
        new[r.request.id] = IntPlan(r.request.id, joined(list(past) + list(future)))
    return new, broken, usage


def fits(usage: Usage, segs, cap: int) -> bool:
    return all(used + x <= cap for a, b, x in segs for _, _, used in usage.pieces(a, b))


def split(segs, at: int, after: bool = False) -> tuple[IntSegment, ...]:
    """The part of a plan before `at` (or from `at` on)."""
    if after:
        return tuple((max(a, at), b, x) for a, b, x in segs if b > at)
    return tuple((a, min(b, at), x) for a, b, x in segs if a < at)
