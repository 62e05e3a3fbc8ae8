"""What `itb study rtt-sweep` prints at the end: one row per point."""

from __future__ import annotations

from itb.draw.html import pm
from itb.study.registry import Shown, Table, fixed
from itb.study.rtt_sweep.args import RttSweepArgs
from itb.study.rtt_sweep.results import Results
from itb.sweep.sweep import Outcome


def tables(res: Outcome[Results], a: RttSweepArgs) -> list[Shown]:
    r = res.results
    t = Table(
        title=f"RTT sweep ({res.status}): {r.window_s:g} s measured, C = "
        f"{r.capacity_bps / 1e6:g} Mbit/s, flows paced at C_a = {r.access_bps / 1e6:g} Mbit/s; "
        "mean over repetitions ± 95 % interval",
        columns=[
            "cc",
            "flows",
            "C_g",
            "RTT (ms)",
            "goodput (Mbit/s)",
            "goodput / C_a",
            "Jain",
            "utilisation",
            "reps",
            "failed",
        ],
    )
    for p in r.points:
        t.rows.append(
            [
                p.cc,
                str(p.flows),
                f"{p.c_g:g}",
                f"{p.rtt_ms:g}",
                fixed(None if p.mean_goodput_bps is None else p.mean_goodput_bps / 1e6, 1),
                pm(p.mean_share, p.mean_share_ci95, 3),
                pm(p.jain, p.jain_ci95, 3),
                pm(p.utilisation, p.utilisation_ci95, 3),
                str(len(p.repetitions)),
                str(p.failed_repetitions),
            ]
        )
    return [t]
