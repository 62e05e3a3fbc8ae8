"""Quotes beside schedule readers on a link with many plans: what
tests/service/test_service_readers.py measures briefly and bench/service_readers.py at
20 000 plans (issue 42: at 14–20 k plans five schedule readers made quotes' p50 6.4 s).

The store is filled in-process through the ledger (`fill`), then a real server serves it:
one writer quotes (and cancels) sequentially, measuring each quote, while `readers`
clients read the link's schedule in a loop.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import time
from pathlib import Path

import httpx

from itb.service.intplan import NS, IntRequest
from itb.service.ledger import Ledger, LinkSpec
from itb.service.store import Store


def fill(db: Path, plans: int, seed: int = 3) -> None:
    """`plans` held (one in two committed) over the next hours on a 10 Gbit/s link."""
    now = time.time_ns()
    store = Store(db)
    lg = Ledger(store, [LinkSpec("access", 10 * 10**9)], 0.025, 86400.0, now)
    rng = random.Random(seed)
    for k in range(plans):
        a = now + rng.randint(60, 6 * 3600) * NS
        r = IntRequest(f"f{k:05d}", "access", rng.randint(10**6, 10**8), a, a + 60 * NS, 10**9)
        rec, _ = lg.quote(r, now)
        if rec.state == "held" and k % 2:
            lg.commit(r.id, now)
    store.close()


def _read(url: str, every_s: float, stop, reads) -> None:
    """One reader: the link's schedule again and again (every_s 0: in a loop; a page
    reloads it every 5 s), until `stop` is set."""
    with httpx.Client(base_url=url, timeout=120) as c:
        while not stop.is_set():
            r = c.get("/v1/links/access/schedule")
            assert r.status_code == 200
            with reads.get_lock():
                reads.value += 1
            stop.wait(every_s)


async def measure(
    url: str, readers: int, quotes: int, every_s: float = 0.0
) -> tuple[list[float], int]:
    """Each quote's answer time (each quote cancelled after it), and the schedules read
    meanwhile. The readers are processes of their own, so that their clients' work is not
    counted in the writer's answer times (the server's share of the CPU is)."""
    ctx = multiprocessing.get_context("fork")
    stop, reads = ctx.Event(), ctx.Value("i", 0)
    procs = [ctx.Process(target=_read, args=(url, every_s, stop, reads)) for _ in range(readers)]
    for p in procs:
        p.start()
    out = []
    rng = random.Random(4)
    try:
        async with httpx.AsyncClient(base_url=url, timeout=120) as c:
            await asyncio.sleep(0.5 if readers else 0)  # the readers under way
            for k in range(quotes):
                a = time.time() + rng.uniform(60, 6 * 3600)
                rid = f"w{readers}-{k:04d}"
                body = {"id": rid, "link": "access", "volume": "10MB", "release": a,
                        "deadline": a + 60, "max_rate": "1Gbit"}  # fmt: skip
                t = time.perf_counter()
                r = await c.post("/v1/requests", json=body)
                out.append(time.perf_counter() - t)
                assert r.status_code == 201, r.text
                assert (await c.delete(f"/v1/requests/{rid}")).status_code == 200
    finally:
        stop.set()
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
    return out, reads.value
