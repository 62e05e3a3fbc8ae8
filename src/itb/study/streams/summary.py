"""What `itb study streams` prints at the end: one row per point, as the document's
Table 4."""

from __future__ import annotations

from itb.draw.html import pm
from itb.study.registry import Shown, Table, fixed
from itb.study.streams.args import StreamsArgs
from itb.study.streams.results import Results
from itb.sweep.sweep import Outcome


def tables(res: Outcome[Results], a: StreamsArgs) -> list[Shown]:
    r = res.results
    t = Table(
        title=f"parallel streams ({res.status}): {r.nodes} nodes, C = {r.capacity_bps / 1e6:g} "
        f"Mbit/s, {r.window_s:g} s measured; mean over repetitions ± 95 % interval",
        columns=[
            "cc",
            "streams / node",
            "total goodput (Mbit/s)",
            "utilisation",
            "stream mean (Mbit/s)",
            "Jain (nodes)",
            "reps",
            "failed",
        ],
    )
    for p in r.points:
        t.rows.append(
            [
                p.cc,
                str(p.streams),
                pm(
                    None if p.total_bps is None else p.total_bps / 1e6,
                    None if p.total_bps_ci95 is None else p.total_bps_ci95 / 1e6,
                    1,
                ),
                pm(p.utilisation, p.utilisation_ci95, 3),
                fixed(None if p.stream_mean_bps is None else p.stream_mean_bps / 1e6, 2),
                pm(p.jain, p.jain_ci95, 4),
                str(p.repetitions),
                str(p.failed_repetitions),
            ]
        )
    return [t]
