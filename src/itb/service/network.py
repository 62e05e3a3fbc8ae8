"""Several links: every request crosses its own access link (`Request.link`) and, when
there is one, a bottleneck all requests share (the WAN behind the sites). A plan is valid
when, at every instant, every link carries at most its planning capacity.

`Links` says each link's capacity; `Load` is the rate every link carries over time (one
`Usage` per link) and places a request in what its route leaves: the least of its links'
residual capacities at each instant.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from itb.service.model import TOLERANCE, Request, Segment
from itb.service.usage import Usage, fill_residual

SHARED = "(shared)"  # the bottleneck's name in a route


@dataclass(frozen=True)
class Links:
    """Planning capacities (bit/s, already B_in · (1 − m)): per link name, `default` for any
    other, and the shared bottleneck's (None: none)."""

    caps: Mapping[str, float] = field(default_factory=dict)
    default: float | None = None
    shared: float | None = None

    @classmethod
    def of(cls, cap: float | Links) -> Links:
        """One capacity for every link and no shared bottleneck, or the Links given."""
        return cap if isinstance(cap, Links) else cls(default=float(cap))

    def route(self, r: Request) -> tuple[str, ...]:
        return (r.link, SHARED) if self.shared is not None else (r.link,)

    def cap(self, name: str) -> float:
        if name == SHARED and self.shared is not None:
            return self.shared
        c = self.caps.get(name, self.default)
        if c is None:
            raise KeyError(f"no capacity for link {name!r}")
        return c

    def route_cap(self, r: Request) -> float:
        return min(self.cap(x) for x in self.route(r))


class Load:
    def __init__(self, links: Links) -> None:
        self.links = links
        self.usage: dict[str, Usage] = {}

    def of(self, name: str) -> Usage:
        return self.usage.setdefault(name, Usage())

    def add(self, r: Request, segments: Iterable[Segment]) -> None:
        segs = list(segments)
        for name in self.links.route(r):
            self.of(name).add(segs)

    def residual(self, r: Request, a: float, b: float) -> Iterator[Segment]:
        """(from, to, capacity left on r's route) covering [a, b)."""
        route = [(self.of(x), self.links.cap(x)) for x in self.links.route(r)]
        cuts = sorted({a, b, *(t for u, _ in route for t in u.t if a < t < b)})
        for t0, t1 in zip(cuts, cuts[1:]):
            yield (t0, t1, min(cap - u.rate_at(t0) for u, cap in route))

    def fill_early(self, r: Request, a: float, b: float):
        cap = self.links.route_cap(r)
        return fill_residual(self.residual(r, a, b), cap, r.max_rate_bps, r.bits, True)

    def fill_late(self, r: Request, a: float, b: float):
        cap = self.links.route_cap(r)
        pieces = reversed(list(self.residual(r, a, b)))
        return fill_residual(pieces, cap, r.max_rate_bps, r.bits, False)

    def fit_constant(self, r: Request, rate: float):
        """The earliest start s ≥ rt such that `rate` fits all the way to s + vol/rate ≤ dt."""
        a, b = r.release_s, r.deadline_s
        dur = r.bits / rate
        slack = TOLERANCE * self.links.route_cap(r)
        starts = sorted(
            {a, *(t for x in self.links.route(r) for t in self.of(x).t if a < t <= b - dur)}
        )
        for s in starts:
            if s + dur > b * (1 + 1e-12) + TOLERANCE:
                break
            if all(left + slack >= rate for _, _, left in self.residual(r, s, s + dur)):
                return ((s, s + dur, rate),)
        return None


def max_min(routes: list[tuple[str, ...]], max_rates: list[float], links: Links) -> list[float]:
    """Max-min fair rates (progressive filling): every unfrozen flow grows alike until a
    link it crosses is full or it reaches its max-rate."""
    n = len(routes)
    rates, frozen = [0.0] * n, [False] * n
    left = {x: links.cap(x) for route in routes for x in route}
    while not all(frozen):
        live = [i for i in range(n) if not frozen[i]]
        count: dict[str, int] = {}
        for i in live:
            for x in routes[i]:
                count[x] = count.get(x, 0) + 1
        inc = min(
            min(left[x] / c for x, c in count.items()),
            min(max_rates[i] - rates[i] for i in live),
        )
        for i in live:
            rates[i] += inc
            for x in routes[i]:
                left[x] -= inc
        full = {x for x in count if left[x] <= TOLERANCE * links.cap(x)}
        for i in live:
            if rates[i] >= max_rates[i] * (1 - TOLERANCE) or full & set(routes[i]):
                frozen[i] = True
    return rates
