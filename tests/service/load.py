"""A load on a running `itb serve` and the store's check afterwards: what
tests/service/test_service_load.py runs for a few seconds and bench/service_load.py for
100 clients × 30 s (issue 42's probe).

Each client, until the time is up: quotes a request of 10 B to 20 MB (log-uniform),
released 0.5–20 s from now, with a window of 0.5–30 s, at a max-rate of 10 Mbit/s to
1 Gbit/s; commits 60 % of what is held and cancels one commitment in ten; reads the
link's schedule one time in twenty.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from itb.service import intplan
from itb.service.store import Store

RATES = ["1Gbit", "500Mbit", "100Mbit", "10Mbit"]


@dataclass
class Load:
    quotes_s: list[float] = field(default_factory=list)  # each quote's answer time
    codes: Counter = field(default_factory=Counter)  # (call, status) → count
    states: Counter = field(default_factory=Counter)  # the quotes' answers

    def quantile(self, q: float) -> float:
        xs = sorted(self.quotes_s)
        return xs[min(len(xs) - 1, math.floor(q * len(xs)))] if xs else math.nan


async def run(url: str, clients: int, seconds: float, seed: int = 1) -> Load:
    out = Load()
    stop = time.monotonic() + seconds

    async def client(k: int) -> None:
        rng = random.Random(seed * 100_000 + k)
        async with httpx.AsyncClient(base_url=url, timeout=60) as c:
            j = 0
            while time.monotonic() < stop:
                j += 1
                now = time.time()
                release = now + rng.uniform(0.5, 20)
                body = {
                    "id": f"c{k:03d}-{j:05d}", "link": "access",
                    "volume": int(10 ** rng.uniform(1, math.log10(20e6))),
                    "release": release, "deadline": release + rng.uniform(0.5, 30),
                    "max_rate": rng.choice(RATES),
                }  # fmt: skip
                t0 = time.perf_counter()
                r = await c.post("/v1/requests", json=body)
                out.quotes_s.append(time.perf_counter() - t0)
                out.codes["quote", r.status_code] += 1
                if r.status_code != 201:
                    continue
                out.states[r.json()["state"]] += 1
                if r.json()["state"] == "held" and rng.random() < 0.6:
                    r = await c.post(f"/v1/requests/{body['id']}/commit")
                    out.codes["commit", r.status_code] += 1
                    if r.status_code == 200 and rng.random() < 0.1:
                        r = await c.delete(f"/v1/requests/{body['id']}")
                        out.codes["cancel", r.status_code] += 1
                if rng.random() < 0.05:
                    r = await c.get("/v1/links/access/schedule")
                    out.codes["schedule", r.status_code] += 1

    await asyncio.gather(*(client(k) for k in range(clients)))
    return out


def check_store(db: Path, rate_bps: int, margin: float) -> tuple[int, int, list[str]]:
    """(plans stored, plans failing the checker, the failures): every stored plan against
    its own request, whatever its state, and the held and committed ones together
    against the link's capacity (itb.service.intplan.violations, exact)."""
    store = Store(db)
    try:
        recs = store.all()
    finally:
        store.close()
    cap = intplan.planning_cap(rate_bps, margin)
    bad: list[str] = []
    planned = [r for r in recs if r.plan is not None]
    for r in planned:
        bad += intplan.violations({r.request.id: r.request}, {r.request.id: r.plan}, 10**15)  # type: ignore[dict-item]
    active = [r for r in planned if r.state in ("held", "committed")]
    bad += intplan.violations(
        {r.request.id: r.request for r in active},
        {r.request.id: r.plan for r in active},  # type: ignore[misc]
        cap,
    )
    failing = {line.split(":")[0] for line in bad}
    return len(planned), len(failing), bad
