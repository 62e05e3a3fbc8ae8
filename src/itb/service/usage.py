"""A link's allocated rate over time: a step function, 0 outside its breakpoints.

`t[k]` are increasing dates; `v[k]` is the rate allocated on [t[k], t[k+1]) and the last
value is 0. `fill_residual` places a volume in what is left of a capacity (early or late);
`network.Load` uses it on a request's route, `fill_early` on one link (the service).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator

from itb.service.model import TOLERANCE, Plan, Segment, merged


class Usage:
    def __init__(self, plans: Iterable[Plan] = ()) -> None:
        self.t: list[float] = []
        self.v: list[float] = []
        for p in plans:
            self.add(p.segments)

    def _split(self, at: float) -> int:
        """The index of the breakpoint at `at`, inserted if it was not one."""
        k = bisect_right(self.t, at) - 1
        if k >= 0 and self.t[k] == at:
            return k
        self.t.insert(k + 1, at)
        self.v.insert(k + 1, self.v[k] if k >= 0 else 0.0)
        return k + 1

    def add(self, segments: Iterable[Segment], sign: float = 1.0) -> None:
        for a, b, r in segments:
            i, j = self._split(a), self._split(b)
            for k in range(i, j):
                self.v[k] += sign * r

    def remove(self, segments: Iterable[Segment]) -> None:
        self.add(segments, -1.0)

    def pieces(self, a: float, b: float) -> Iterator[Segment]:
        """(from, to, allocated rate) covering [a, b) in order."""
        k = bisect_right(self.t, a) - 1
        t = a
        while t < b:
            nxt = self.t[k + 1] if k + 1 < len(self.t) else b
            end = min(nxt, b)
            yield (t, end, self.v[k] if k >= 0 else 0.0)
            t, k = end, k + 1

    def peak(self, a: float | None = None, b: float | None = None) -> float:
        if not self.t:
            return 0.0
        a = self.t[0] if a is None else a
        b = self.t[-1] if b is None else b
        return max((r for _, _, r in self.pieces(a, b)), default=0.0)

    def fill_early(self, cap: float, a: float, b: float, max_rate: float, bits: float):
        """`bits` at up to max-rate in what a capacity leaves, as early as they fit: the
        request's segments, or None (the service's admission; the planner's policies place
        requests through `network.Load`)."""
        residual = ((x, y, cap - used) for x, y, used in self.pieces(a, b))
        return fill_residual(residual, cap, max_rate, bits, True)

    def rate_at(self, t: float) -> float:
        """The rate allocated at date t."""
        k = bisect_right(self.t, t) - 1
        return self.v[k] if 0 <= k < len(self.v) else 0.0


def fill_residual(pieces, cap: float, max_rate: float, bits: float, forward: bool):
    """Place `bits` at up to max-rate in (from, to, capacity left) pieces, in their order
    (forward: each piece from its start; backward: to its end); None if they do not fit."""
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
