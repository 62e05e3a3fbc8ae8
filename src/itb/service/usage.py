"""A link's allocated rate over time: a step function, 0 outside its breakpoints.

`t[k]` are increasing dates; `v[k]` is the rate allocated on [t[k], t[k+1]) and the last
value is 0. Dates and rates are numbers of one kind: float seconds and bit/s (the
planner's workloads), or integer nanoseconds and bit/s (the service: `intplan`), for
which every sum is exact.

The breakpoints stay as few as the step function needs: one whose rate equals the one
before it is dropped when a plan is added or removed, and `prune(before)` drops those of
the past (a service's link under quote/cancel churn keeps only its future's).

`fill_residual` places a volume in what is left of a capacity (early or late);
`network.Load` uses it on a request's route, `fill_early` on one link.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator

from itb.service.model import TOLERANCE, Plan, Segment, merged


class Usage:
    def __init__(self, plans: Iterable[Plan] = ()) -> None:
        self.t: list = []
        self.v: list = []
        self.floor = None  # dates before it were pruned: segments are cut there
        for p in plans:
            self.add(p.segments)

    def _split(self, at) -> int:
        """The index of the breakpoint at `at`, inserted if it was not one."""
        k = bisect_right(self.t, at) - 1
        if k >= 0 and self.t[k] == at:
            return k
        self.t.insert(k + 1, at)
        self.v.insert(k + 1, self.v[k] if k >= 0 else 0)
        return k + 1

    def _join(self, k: int) -> None:
        """Drops breakpoint k if its rate is the one before it (0 before the first)."""
        if 0 <= k < len(self.t) and self.v[k] == (self.v[k - 1] if k else 0):
            del self.t[k], self.v[k]

    def add(self, segments: Iterable, sign: int = 1) -> None:
        for a, b, r in segments:
            if self.floor is not None:
                a = max(a, self.floor)
            if b <= a:
                continue
            i, j = self._split(a), self._split(b)
            for k in range(i, j):
                self.v[k] += sign * r
            self._join(j)  # j first: dropping it leaves i where it was
            self._join(i)

    def remove(self, segments: Iterable) -> None:
        self.add(segments, -1)

    def prune(self, before) -> None:
        """Forgets the breakpoints before `before` (the rate at it is kept): what is added
        or removed later is cut there."""
        k = bisect_right(self.t, before) - 1
        if k > 0:
            del self.t[:k], self.v[:k]
        if k >= 0 and self.t and self.t[0] < before:
            self.t[0] = before
        self.floor = before if self.floor is None else max(self.floor, before)

    def pieces(self, a, b) -> Iterator[tuple]:
        """(from, to, allocated rate) covering [a, b) in order."""
        k = bisect_right(self.t, a) - 1
        t = a
        while t < b:
            nxt = self.t[k + 1] if k + 1 < len(self.t) else b
            end = min(nxt, b)
            yield (t, end, self.v[k] if k >= 0 else 0)
            t, k = end, k + 1

    def peak(self, a=None, b=None):
        if not self.t:
            return 0
        a = self.t[0] if a is None else a
        b = self.t[-1] if b is None else b
        return max((r for _, _, r in self.pieces(a, b)), default=0)

    def fill_early(self, cap: float, a: float, b: float, max_rate: float, bits: float):
        """`bits` at up to max-rate in what a capacity leaves, as early as they fit: the
        request's segments, or None (float dates; the service's is `intplan.fill_early`)."""
        residual = ((x, y, cap - used) for x, y, used in self.pieces(a, b))
        return fill_residual(residual, cap, max_rate, bits, True)

    def rate_at(self, t):
        """The rate allocated at date t."""
        k = bisect_right(self.t, t) - 1
        return self.v[k] if 0 <= k < len(self.v) else 0


def fill_residual(pieces, cap: float, max_rate: float, bits: float, forward: bool):
    """Place `bits` at up to max-rate in (from, to, capacity left) pieces, in their order
    (forward: each piece from its start; backward: to its end); None unless the whole
    volume fits (float rounding aside: `model.TOLERANCE` of it)."""
    out: list[Segment] = []
    need = bits
    for a, b, left in pieces:
        rate = min(max_rate, left)
        if rate <= TOLERANCE * cap:
            continue
        take = rate * (b - a)
        if take >= need:
            d = need / rate
            out.append((a, a + d, rate) if forward else (b - d, b, rate))
            return merged(out)
        out.append((a, b, rate))
        need -= take
    return merged(out) if need <= TOLERANCE * bits else None
