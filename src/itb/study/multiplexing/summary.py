"""What `itb study multiplexing` prints at the end: one row per point."""

from __future__ import annotations

from itb.draw.html import pm
from itb.study.multiplexing.args import MultiplexingArgs
from itb.study.multiplexing.results import Results
from itb.study.registry import Shown, Table
from itb.sweep.sweep import Outcome


def tables(res: Outcome[Results], a: MultiplexingArgs) -> list[Shown]:
    t = Table(
        title=f"multiplexing ({res.status}): C_g {a.c_g:g}, R {a.r:g}, RTT {a.rtt_ms:g} ms; "
        "T in s, mean over repetitions ± 95 % interval",
        columns=[
            "cc",
            "K",
            "sources fwd / rev",
            "T_mean",
            "T_max",
            "throughput CoV",
            "reps",
            "failed",
            "T_max against the first K",
        ],
    )
    for p in res.results.points:
        c = p.against_first
        t.rows.append(
            [
                p.cc,
                str(p.k),
                f"{p.forward_sources} / {p.reverse_sources}",
                pm(p.t_mean, p.t_mean_ci95, 2),
                pm(p.t_max, p.t_max_ci95, 2),
                pm(p.swing, p.swing_ci95, 3),
                str(p.repetitions),
                str(p.failed),
                (
                    c.verdict
                    + (f" ({100 * c.difference:+.1f} %)" if c.difference is not None else "")
                )
                if c
                else "(the reference)",
            ]
        )
    return [t]
