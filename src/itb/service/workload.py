"""Workloads: the paper's §V example made feasible, and seeded random ones.

The paper's example (Vicat-Blanc Primet et al., PFLDnet 2006, §V) asks 2 × 500 GB by
60 s at 1 Gbit/s: 8 000 s of transfer, infeasible. Made feasible, each request is half of
what the planning capacity carries in the window: 2 requests released at 0, deadline 60 s,
max-rate B_in.

A random workload (seed, N, offered load ρ, sites) spreads N releases uniformly over a horizon
H; each window lasts 5–40 % of H, each max-rate is B_in, B_in/2 or B_in/4; volumes are
drawn (uniform 0.2–1 of what the request could send alone in its window) and scaled so
that Σ vol = ρ · C · H, then each capped at 95 % of what it could send alone (so that
every request is feasible by itself); `offered_load` says what it came to.
"""

from __future__ import annotations

import numpy as np

from itb.service.model import Request


def paper_example(b_in: float, margin: float, window_s: float = 60.0, n: int = 2):
    cap = b_in * (1 - margin)
    vol = int(cap * window_s / 8 / n)
    return [Request(f"r{k + 1}", vol, 0.0, window_s, b_in) for k in range(n)]


def random(
    seed: int,
    n: int,
    load: float,
    b_in: float,
    margin: float,
    horizon_s: float = 600.0,
    sites: int = 1,
):
    """With `sites` > 1 the requests take access links site-1 … site-N in turn (the load
    is then per access link); one site: every request on "access"."""
    cap = b_in * (1 - margin)
    rng = np.random.default_rng(seed)
    release = np.sort(rng.uniform(0, horizon_s * 0.8, n))
    window = rng.uniform(0.05, 0.4, n) * horizon_s
    deadline = np.minimum(release + window, horizon_s)
    window = deadline - release
    max_rate = b_in / rng.choice([1, 2, 4], n)
    alone = np.minimum(max_rate, cap) * window / 8  # bytes it could send by itself
    raw = rng.uniform(0.2, 1.0, n) * alone
    vol = np.minimum(raw * load * sites * cap * horizon_s / 8 / raw.sum(), 0.95 * alone)
    return [
        Request(
            f"w{seed}-{k:03d}",
            max(1, int(vol[k])),
            float(release[k]),
            float(deadline[k]),
            float(max_rate[k]),
            "access" if sites == 1 else f"site-{k % sites + 1}",
        )
        for k in range(n)
    ]


def offered_load(requests: list[Request], cap: float) -> float:
    span = max(r.deadline_s for r in requests) - min(r.release_s for r in requests)
    return sum(r.bits for r in requests) / (cap * span)
