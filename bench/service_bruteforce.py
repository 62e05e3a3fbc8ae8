#!/usr/bin/env python3
"""ITB's planner against brute force (docs/service.md, "Planner benchmark").

On `--workloads` small seeded random workloads (N uniform in 6–10 requests, offered load
uniform in 1.0–2.5, B_in 1 Gbit/s, m = 2.5 %, 600 s), every subset is a candidate: the
best is the largest feasible one and, among those, the one with the most bytes
(subsets in that order, the first the exact LP finds feasible). Per workload:

- count: ITB admits as many requests as the best subset;
- bytes: among equally many, as many bytes (relative difference ≤ 1e-9);
- agree: `exact.plan`'s set is feasible by `exact.feasible`, and `exact.plan` admits
  everything when `exact.feasible` says the whole workload fits;
- whole: every plan of EDF, ALAP and ITB delivers its whole volume (the checker).

    python3 bench/service_bruteforce.py [--workloads 1000] [--first-seed 0]

Prints each workload that fails, then the counts; exit status 0 once printed.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time

from itb.service import check, exact, greedy, workload

B_IN, MARGIN = 1e9, 0.025
CAP = B_IN * (1 - MARGIN)


def draw(seed: int):
    """The workload of a seed: its requests (the same for a seed whatever else runs)."""
    rng = random.Random(seed)
    n, load = rng.randint(6, 10), rng.uniform(1.0, 2.5)
    return workload.random(seed, n, load, B_IN, MARGIN)


def best_subset(reqs) -> tuple[int, int]:
    """(count, bytes) of the largest feasible subset with the most bytes."""
    for size in range(len(reqs), 0, -1):
        subsets = sorted(
            itertools.combinations(reqs, size), key=lambda s: -sum(r.volume_bytes for r in s)
        )
        for s in subsets:
            if exact.feasible(list(s), CAP):
                return size, sum(r.volume_bytes for r in s)
    return 0, 0


def compare(seed: int) -> dict:
    reqs = draw(seed)
    by_id = {r.id: r for r in reqs}
    out, _ = exact.plan(reqs, CAP)
    count, nbytes = len(out.plans), sum(by_id[k].volume_bytes for k in out.plans)
    best = best_subset(reqs)
    whole = all(
        check.violations(by_id, o.plans, CAP) == []
        for o in (greedy.edf(reqs, CAP), greedy.alap(reqs, CAP), out)
    )
    admitted = [by_id[k] for k in out.plans]
    agree = exact.feasible(admitted, CAP) and (not exact.feasible(reqs, CAP) or count == len(reqs))
    return {
        "seed": seed,
        "n": len(reqs),
        "count_ok": count == best[0],
        "bytes_ok": count != best[0] or abs(nbytes - best[1]) <= 1e-9 * best[1],
        "bytes_short": (best[1] - nbytes) / best[1] if best[1] else 0.0,
        "agree": agree,
        "whole": whole,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", type=int, default=1000)
    ap.add_argument("--first-seed", type=int, default=0)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.workloads):
        row = compare(seed)
        rows.append(row)
        if not all(row[k] for k in ("count_ok", "bytes_ok", "agree", "whole")):
            short = "ok" if row["bytes_ok"] else f"{row['bytes_short']:.1%} short"
            print(
                f"  seed {seed} (N {row['n']}): count {'ok' if row['count_ok'] else 'LOST'}, "
                f"bytes {short}, "
                f"plan/feasible {'agree' if row['agree'] else 'DISAGREE'}, "
                f"volumes {'whole' if row['whole'] else 'SHORT'}",
                flush=True,
            )
    n = len(rows)
    print(
        f"{n} workloads in {time.perf_counter() - t0:.0f} s: count {sum(r['count_ok'] for r in rows)}"
        f"/{n}, byte tie-break {sum(r['bytes_ok'] for r in rows)}/{n}, plan/feasible agree "
        f"{sum(r['agree'] for r in rows)}/{n}, whole volumes {sum(r['whole'] for r in rows)}/{n}"
    )
    lost = [r["seed"] for r in rows if not r["bytes_ok"]]
    print(f"seeds losing the byte tie-break: {lost}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
