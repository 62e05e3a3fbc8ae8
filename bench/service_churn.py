#!/usr/bin/env python3
"""The service's ledger over time and beside a busy disk (docs/service.md, "Measured").

1. Churn: `--cycles` (100 000) quote/cancel cycles on a link holding `--base` (200)
   committed plans (100 Mbit/s for 20 s every 3 s, one more every 3 s of the run, so
   that the link stays as loaded as time passes), the clock advancing 10 ms a cycle, each request released 0–60 s
   ahead; every tenth of the run prints the link's breakpoints, the planner's time per
   quote (intplan.fill_early on the link's usage) and the whole quote's (plan and SQLite
   write), p50 / p99. Before integer plans the breakpoints grew without bound (22 000
   after 10 000 cycles) and the planning time with them. The store is in /dev/shm: the
   figure is the planner's, not the disk's.
2. Disk: `--quotes` (2 000) quotes, each then cancelled, against 1 000 held plans, in a
   store on the disk of `--dir` while another process writes 64 KiB and fsyncs in a
   loop in the same directory: the whole quote's p50 / p99 / max with the service's
   settings (a quote's hold written with synchronous=NORMAL in WAL: it survives the
   process, not a power cut; commitments FULL) and, for comparison, every quote FULL.

    python3 bench/service_churn.py [--cycles 100000] [--quotes 2000] [--dir .]

Exit status 0 once printed (targets reported, not asserted: quote p99 ≤ 10 ms).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from itb.service import intplan
from itb.service.intplan import NS, IntRequest
from itb.service.ledger import Ledger, LinkSpec
from itb.service.store import Store

GBIT = 10**9
T0 = 1_800_000_000 * NS


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def churn(cycles: int, base: int) -> None:
    with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        lg = Ledger(Store(Path(tmp) / "s.db"), [LinkSpec("access", GBIT)], 0.025, 300.0, T0)
        rng = random.Random(1)

        def commitment(k: int) -> None:  # 100 Mbit/s over [3k s, 3k + 20 s]
            r = IntRequest(f"b{k}", "access", 100_000_000 * 20 // 8, T0 + 3 * k * NS,
                           T0 + (3 * k + 20) * NS, 100_000_000)  # fmt: skip
            lg.commit(lg.quote(r, lg.now)[0].request.id, lg.now)

        for k in range(base):
            commitment(k)
        print(f"churn: {cycles} quote/cancel cycles on a link with {base} commitments")
        plan_s: list[float] = []
        quote_s: list[float] = []
        for c in range(cycles):
            now = T0 + c * 10_000_000
            release = now + rng.randint(0, 60 * NS)
            r = IntRequest(f"q{c}", "access", rng.randint(10, 20_000_000), release,
                           release + rng.randint(NS // 2, 30 * NS), rng.choice([10**7, 10**8, GBIT]))  # fmt: skip
            u, cap = lg.usage["access"], lg.capacity("access")
            t = time.perf_counter()
            intplan.fill_early(
                u, cap, max(r.release_ns, now), r.deadline_ns, r.max_rate_bps, r.bit_ns
            )
            plan_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            rec, _ = lg.quote(r, now)
            quote_s.append(time.perf_counter() - t)
            if rec.state == "held":
                lg.cancel(r.id, now)
            if c % 300 == 299:  # one more commitment every 3 s: the link stays as loaded
                commitment(base + c // 300)
            if (c + 1) % max(1, cycles // 10) == 0:
                print(
                    f"  {c + 1:7d} cycles: {len(u.t):5d} breakpoints, planning p50 "
                    f"{statistics.median(plan_s) * 1e3:.3f} / p99 {pct(plan_s, 0.99) * 1e3:.3f} ms"
                    f", quote p50 {statistics.median(quote_s) * 1e3:.3f} / p99 "
                    f"{pct(quote_s, 0.99) * 1e3:.3f} ms",
                    flush=True,
                )
                plan_s, quote_s = [], []
        lg.store.close()


def writer(path: str, stop) -> None:
    """64 KiB written and fsynced in a loop: another program busy on the same disk."""
    block = os.urandom(65536)
    with open(path, "wb") as f:
        while not stop.is_set():
            f.write(block)
            f.flush()
            os.fsync(f.fileno())
            if f.tell() > 256 * 2**20:
                f.seek(0)


class FullStore(Store):
    """Every transaction FULL (the service's setting before): the comparison."""

    @contextmanager
    def transaction(self, durable: bool = False):
        with super().transaction(durable=True) as db:
            yield db


def disk(quotes: int, where: Path, busy: bool, store_class=Store) -> list[float]:
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        stop = mp.Event()
        w = mp.Process(target=writer, args=(str(Path(tmp) / "busy.bin"), stop))
        if busy:
            w.start()
        try:
            store = store_class(Path(tmp) / "s.db", checkpoints=True)
            lg = Ledger(store, [LinkSpec("access", GBIT)], 0.025, 3600.0, T0)
            rng = random.Random(2)
            for k in range(1000):
                a = T0 + rng.randint(0, 3600 * NS)
                lg.quote(IntRequest(f"h{k}", "access", rng.randint(10**6, 10**9), a, a + 60 * NS,
                                    GBIT), T0)  # fmt: skip
            out = []
            for k in range(quotes):
                a = T0 + rng.randint(0, 3600 * NS)
                r = IntRequest(f"q{k}", "access", rng.randint(10, 10**8), a, a + 60 * NS, GBIT)
                t = time.perf_counter()
                rec, _ = lg.quote(r, T0)
                out.append(time.perf_counter() - t)
                if rec.state == "held":
                    lg.cancel(r.id, T0)
            store.close()
            return out
        finally:
            stop.set()
            if busy:
                w.join()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=100_000)
    ap.add_argument("--base", type=int, default=200)
    ap.add_argument("--quotes", type=int, default=2000)
    ap.add_argument("--dir", type=Path, default=Path("."))
    args = ap.parse_args(argv)
    if args.cycles:
        churn(args.cycles, args.base)
    if args.quotes:
        print(f"disk: {args.quotes} quotes against 1 000 held plans, store in {args.dir.resolve()}")
        for label, busy, cls in (
            ("idle disk, the service's settings", False, Store),
            ("busy disk, the service's settings", True, Store),
            ("busy disk, every quote FULL", True, FullStore),
        ):
            xs = disk(args.quotes, args.dir, busy, cls)
            print(
                f"  {label}: quote p50 {statistics.median(xs) * 1e3:.2f} ms, p99 "
                f"{pct(xs, 0.99) * 1e3:.2f} ms, max {max(xs) * 1e3:.1f} ms",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
