"""ITB's planner: admission decided exactly, the admitted set as large as it can be.

Between consecutive instants of the requests' releases and deadlines (the intervals
I_k of length ℓ_k), any feasible schedule can be described by x[r,k], the bits request r
sends in I_k: a set of requests is feasible exactly when

    Σ_k x[r,k] = vol(r)               (every volume, within its window)
    Σ_r x[r,k] ≤ C · ℓ_k              (the capacity C = B_in · (1 − m))
    0 ≤ x[r,k] ≤ max-rate(r) · ℓ_k    (no rate above max-rate)

with x[r,k] = 0 outside [rt(r), dt(r)] — a transportation problem (a max-flow), solved
here as a linear programme. The largest admissible set is the mixed-integer programme
that multiplies each volume by a binary y_r and maximises Σ y_r (ties broken towards more
bytes: a second MILP with the count fixed), solved by HiGHS (scipy.optimize.milp). The admitted set's profiles then come from
a second LP that sends every bit as early as the others allow (Σ x[r,k] · end_k minimal),
which shortens the span and leaves the latest capacity free. Each request's rate in I_k is
x[r,k] / ℓ_k: a multi-interval profile.

If HiGHS stops at its time limit with fewer requests than a greedy policy admits, the
greedy set is kept (it is feasible, the LP reshapes it): the planner never admits fewer
than EDF, ALAP or TS2.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse import csr_array, hstack

from itb.service.greedy import Capacity, Outcome, alap, edf, ts2
from itb.service.model import Plan, Request, merged
from itb.service.network import Links

SCALE = 1e6  # the programmes count Mbit and Mbit/s: coefficients near 1


@dataclass
class Optimum:
    """What HiGHS proved: the largest admissible set's size, or a bound on it."""

    admitted: int
    bound: int
    proven: bool


class _Grid:
    """The intervals and the (request, interval) pairs a request may use."""

    def __init__(self, requests: list[Request], links: Links) -> None:
        self.reqs, self.links = requests, links
        self.t = np.unique([x for r in requests for x in (r.release_s, r.deadline_s)])
        self.length = np.diff(self.t)
        rows, cols = [], []
        for i, r in enumerate(requests):
            a = np.searchsorted(self.t, r.release_s)
            b = np.searchsorted(self.t, r.deadline_s)
            ks = np.arange(a, b)
            rows.append(np.full(len(ks), i))
            cols.append(ks)
        self.req = np.concatenate(rows) if rows else np.zeros(0, int)
        self.k = np.concatenate(cols) if cols else np.zeros(0, int)
        self.n = len(self.req)
        rate = np.array([min(r.max_rate_bps, links.route_cap(r)) for r in requests]) / SCALE
        self.upper = rate[self.req] * self.length[self.k]
        self.vol = np.array([r.bits for r in requests]) / SCALE

    def capacity_rows(self) -> tuple[csr_array, np.ndarray]:
        """Σ x[r,k] over the requests crossing a link ≤ its capacity · ℓ_k, per link and k."""
        links = self.links
        routes = [links.route(r) for r in self.reqs]
        names = sorted({x for route in routes for x in route})
        index = {x: i for i, x in enumerate(names)}
        nk = len(self.length)
        rows, cols = [], []
        for j in range(self.n):
            for x in routes[self.req[j]]:
                rows.append(index[x] * nk + self.k[j])
                cols.append(j)
        m = csr_array((np.ones(len(rows)), (rows, cols)), shape=(len(names) * nk, self.n))
        b = np.concatenate([links.cap(x) / SCALE * self.length for x in names])
        return m, b

    def volume_matrix(self) -> csr_array:
        return csr_array(
            (np.ones(self.n), (self.req, np.arange(self.n))), shape=(len(self.reqs), self.n)
        )

    def plans(self, x: np.ndarray) -> dict[str, Plan]:
        segs: dict[str, list] = {r.id: [] for r in self.reqs}
        for j in np.flatnonzero(x > 0):
            k = self.k[j]
            segs[self.reqs[self.req[j]].id].append(
                (float(self.t[k]), float(self.t[k + 1]), float(x[j] * SCALE / self.length[k]))
            )
        return {k: Plan(k, merged(v)) for k, v in segs.items() if v}


def select(requests: list[Request], cap: Capacity, time_limit_s: float = 20.0):
    """The largest feasible subset and, among those, the one with the most bytes (MILP, in
    two stages: the count maximised, then fixed and the bytes maximised; a tie weight
    small enough not to change the count was below HiGHS's tolerance and lost the bytes
    on 7 of 1 000 small workloads). Its ids and what HiGHS proved of the count."""
    if not requests:
        return set(), Optimum(0, 0, True)
    g = _Grid(requests, Links.of(cap))
    cap_m, cap_b = g.capacity_rows()
    nreq = len(requests)
    vol_m = g.volume_matrix()
    # [x | y]: Σ_k x[r,k] − vol_r · y_r = 0
    y_part = csr_array((-g.vol, (np.arange(nreq), np.arange(nreq))), shape=(nreq, nreq))
    a_vol = hstack([vol_m, y_part]).tocsr()
    a_cap = hstack([cap_m, csr_array((cap_m.shape[0], nreq))]).tocsr()
    rows = [LinearConstraint(a_cap, -np.inf, cap_b), LinearConstraint(a_vol, 0, 0)]
    integrality = np.concatenate([np.zeros(g.n), np.ones(nreq)])
    bounds = Bounds(np.zeros(g.n + nreq), np.concatenate([g.upper, np.ones(nreq)]))
    options = {"time_limit": time_limit_s, "mip_rel_gap": 0.0}

    def solve(weight: np.ndarray, extra: list[LinearConstraint]):
        c = np.concatenate([np.zeros(g.n), -weight])
        return milp(c, constraints=rows + extra, integrality=integrality, bounds=bounds,
                    options=options)  # fmt: skip

    res = solve(np.ones(nreq), [])
    if res.x is None:
        return set(), Optimum(0, nreq, False)
    y = res.x[g.n :] > 0.5
    proven = res.status == 0
    if proven:  # the count is the optimum: the most bytes among sets of that count
        count = LinearConstraint(
            np.concatenate([np.zeros(g.n), np.ones(nreq)]), int(y.sum()) - 0.5, np.inf
        )
        more = solve(g.vol / g.vol.max(), [count])
        if more.x is not None and int((more.x[g.n :] > 0.5).sum()) == int(y.sum()):
            y = more.x[g.n :] > 0.5
    chosen = {r.id for r, keep in zip(requests, y) if keep}
    bound = getattr(res, "mip_dual_bound", None)
    ub = len(chosen) if proven else (int(np.floor(-bound + 1e-6)) if bound is not None else nreq)
    return chosen, Optimum(len(chosen), max(ub, len(chosen)), proven)


def shape(requests: list[Request], cap: Capacity) -> dict[str, Plan] | None:
    """Profiles for a feasible set, every bit as early as the others allow; None when the
    set is not feasible (the exact admission test)."""
    if not requests:
        return {}
    g = _Grid(requests, Links.of(cap))
    cap_m, cap_b = g.capacity_rows()
    cost = g.t[1:][g.k] - g.t[0]
    res = linprog(
        cost / max(cost.max(), 1.0),
        A_ub=cap_m,
        b_ub=cap_b,
        A_eq=g.volume_matrix(),
        b_eq=g.vol,
        bounds=np.column_stack([np.zeros(g.n), g.upper]),
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if res.status != 0:
        return None
    # each request's bits summed exactly to its volume (HiGHS keeps equalities to 1e-10)
    x = np.where(res.x > 1e-12, res.x, 0.0)
    sums = np.bincount(g.req, weights=x, minlength=len(requests))
    x *= (g.vol / np.where(sums > 0, sums, 1.0))[g.req]
    return g.plans(x)


def feasible(requests: list[Request], cap: Capacity) -> bool:
    return shape(requests, cap) is not None


def plan(requests: list[Request], cap: Capacity, time_limit_s: float = 20.0):
    """ITB's planner: everything when the LP says the whole set is feasible; otherwise the
    MILP's set (never smaller than a greedy policy's), shaped. Every set it admits is one
    `feasible` accepts, and it admits everything when `feasible` says all fit."""
    t0 = time.perf_counter()
    whole = shape(requests, cap)
    if whole is not None:
        out = Outcome("ITB", whole, [])
        out.planning_s = time.perf_counter() - t0
        return out, Optimum(len(requests), len(requests), True)
    chosen, optimum = select(requests, cap, time_limit_s)
    greedy = [p(requests, cap) for p in (edf, alap, ts2)]
    best = max(greedy, key=lambda o: len(o.plans))
    if len(best.plans) > len(chosen):
        chosen = set(best.plans)
    admitted = [r for r in requests if r.id in chosen]
    plans = shape(admitted, cap)
    if plans is None:  # the MILP's tolerance let through a set the LP refuses: keep greedy's
        admitted = [r for r in requests if r.id in best.plans]
        plans = shape(admitted, cap) or {}
    out = Outcome("ITB", plans, [r.id for r in requests if r.id not in plans])
    out.planning_s = time.perf_counter() - t0
    return out, optimum
