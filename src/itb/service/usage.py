"""A link's allocated rate over time: a step function, 0 outside its breakpoints.

`t[k]` are increasing dates; `v[k]` is the rate allocated on [t[k], t[k+1]) and the last
value is 0. The fills place a request's volume in what is left of a capacity: as early as
possible (EDF, the service's admission), as late as possible, or at one constant rate (TS2).
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

    # The fills: each returns the request's segments, or None when the volume does not fit

    def fill_early(self, cap: float, a: float, b: float, max_rate: float, bits: float):
        return _fill(self.pieces(a, b), cap, max_rate, bits, forward=True)

    def fill_late(self, cap: float, a: float, b: float, max_rate: float, bits: float):
        return _fill(reversed(list(self.pieces(a, b))), cap, max_rate, bits, forward=False)

    def fit_constant(self, cap: float, a: float, b: float, rate: float, bits: float):
        """The earliest start s ≥ a such that `rate` fits over [s, s + bits/rate] ≤ b."""
        dur = bits / rate
        room = cap - rate + TOLERANCE * cap
        starts = [a] + [self.t[k] for k in range(len(self.t)) if a < self.t[k] <= b - dur]
        for s in starts:
            if s + dur > b * (1 + 1e-12) + TOLERANCE:
                break
            if all(r <= room for _, _, r in self.pieces(s, s + dur)):
                return ((s, s + dur, rate),)
        return None


def _fill(pieces, cap: float, max_rate: float, bits: float, forward: bool):
    residual = ((a, b, cap - used) for a, b, used in pieces)
    return fill_residual(residual, cap, max_rate, bits, forward)


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
