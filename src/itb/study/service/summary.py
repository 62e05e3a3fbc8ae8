"""What `itb study service` prints at the end: one row per cell."""

from __future__ import annotations

from itb.study.registry import Shown, Table, fixed
from itb.study.service.args import ServiceArgs
from itb.study.service.results import Results
from itb.sweep.sweep import Outcome


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def tables(res: Outcome[Results], a: ServiceArgs) -> list[Shown]:
    t = Table(
        title=f"transfer service ({res.status}): access link {a.capacity_bps / 1e6:g} Mbit/s, "
        f"RTT {a.rtt_ms:g} ms, m = {100 * a.margin:g} %; late = finish − deadline (s), over "
        "every transfer of every repetition; TS1's misses (among the requests the planner "
        "admitted)",
        columns=["workload", "policy", "mechanism", "admitted", "optimum", "reps", "transfers",
                 "misses", "failed", "late p50", "late p99", "vs plan p99", "f1 (s)", "f2",
                 "margin needed p68", "p95"],
    )  # fmt: skip
    for c in res.results.cells:
        t.rows.append(
            [c.workload, c.policy, c.mechanism, f"{c.admitted}/{c.requests}",
             "–" if c.optimum is None else str(c.optimum), str(c.repetitions), str(c.transfers),
             str(c.misses) + ("" if c.misses_of_planned is None else f" ({c.misses_of_planned})"),
             str(c.failed), fixed(c.late_p50_s, 3), fixed(c.late_p99_s, 3),
             fixed(c.plan_late_p99_s, 3), fixed(c.f1_s, 2), fixed(c.f2, 3),
             pct(c.margin_p68), pct(c.margin_p95)]
        )  # fmt: skip
    return [t]
