"""The greedy policies, each a function of the requests (taken in submission order: by
release, then id) and the planning capacity B_in · (1 − m):

- **TS1** (eWAN's first service, Vicat-Blanc Primet et al., PFLDnet 2006, §V): everything
  accepted and started at its release; the transport shares the link. Its plans are the
  fluid model's: max-min fair shares, each capped at its max-rate, recomputed at every
  release and completion. A TS1 plan may end after its deadline: that is a miss, not a
  refusal.
- **TS2** (the paper's second service, "bandwidth protection": requests serialised
  greedily): each request is given one constant rate, min(max-rate, capacity), from the
  earliest date its rate fits what the requests before it left; refused if that ends
  after its deadline. With max-rate = B_in this is the paper's serialisation.
- **EDF**: by deadline, each placed as early as the others allow (rate up to max-rate in
  what is left at each instant).
- **ALAP**: by deadline, each placed as late as possible before its deadline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from itb.service.model import TOLERANCE, Plan, Request, Segment, merged
from itb.service.network import Links, Load, max_min


@dataclass
class Outcome:
    """A policy's answer: a plan for every admitted request, the refused ones' ids."""

    policy: str
    plans: dict[str, Plan] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    planning_s: float = 0.0


def submission_order(requests: list[Request]) -> list[Request]:
    return sorted(requests, key=lambda r: (r.release_s, r.id))


def deadline_order(requests: list[Request]) -> list[Request]:
    return sorted(requests, key=lambda r: (r.deadline_s, r.release_s, r.id))


Capacity = float | Links  # one planning capacity for every link, or several and a bottleneck


def _placed(name: str, requests: list[Request], cap: Capacity, place: Callable) -> Outcome:
    out = Outcome(name)
    load = Load(Links.of(cap))
    for r in requests:
        segs = place(load, r)
        if segs is None:
            out.refused.append(r.id)
            continue
        load.add(r, segs)
        out.plans[r.id] = Plan(r.id, tuple(segs))
    return out


def ts2(requests: list[Request], cap: Capacity) -> Outcome:
    def place(load: Load, r: Request):
        return load.fit_constant(r, min(r.max_rate_bps, load.links.route_cap(r)))

    return _placed("TS2", submission_order(requests), cap, place)


def edf(requests: list[Request], cap: Capacity) -> Outcome:
    def place(load: Load, r: Request):
        return load.fill_early(r, r.release_s, r.deadline_s)

    return _placed("EDF", deadline_order(requests), cap, place)


def alap(requests: list[Request], cap: Capacity) -> Outcome:
    def place(load: Load, r: Request):
        return load.fill_late(r, r.release_s, r.deadline_s)

    return _placed("ALAP", deadline_order(requests), cap, place)


def fair_shares(caps: list[float], capacity: float) -> list[float]:
    """Max-min fair rates on one link (water-filling): each at most its cap, together at
    most the capacity."""
    return max_min([("link",)] * len(caps), caps, Links(default=capacity))


def ts1(requests: list[Request], cap: Capacity) -> Outcome:
    """The fluid model of everything started at once, shared max-min fairly."""
    links = Links.of(cap)
    reqs = submission_order(requests)
    left = {r.id: r.bits for r in reqs}
    segs: dict[str, list[Segment]] = {r.id: [] for r in reqs}
    pending = list(reqs)
    active: list[Request] = []
    t = reqs[0].release_s if reqs else 0.0
    while pending or active:
        while pending and pending[0].release_s <= t:
            active.append(pending.pop(0))
        if not active:
            t = pending[0].release_s
            continue
        rates = max_min([links.route(r) for r in active], [r.max_rate_bps for r in active], links)
        nxt = min(t + left[r.id] / x for r, x in zip(active, rates))
        if pending:
            nxt = min(nxt, pending[0].release_s)
        for r, x in zip(active, rates):
            segs[r.id].append((t, nxt, x))
            left[r.id] -= x * (nxt - t)
        active = [r for r in active if left[r.id] > TOLERANCE * r.bits]
        t = nxt
    return Outcome("TS1", {k: Plan(k, merged(v)) for k, v in segs.items()})


POLICIES: dict[str, Callable[[list[Request], Capacity], Outcome]] = {
    "TS1": ts1,
    "TS2": ts2,
    "EDF": edf,
    "ALAP": alap,
}
