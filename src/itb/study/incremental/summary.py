"""What `itb study incremental` prints at the end: per cell, one row per step."""

from __future__ import annotations

from itb.draw.html import pm
from itb.study.incremental.args import IncrementalArgs
from itb.study.incremental.results import Results
from itb.study.registry import Shown, Table
from itb.sweep.sweep import Outcome


def tables(res: Outcome[Results], a: IncrementalArgs) -> list[Shown]:
    r = res.results
    shown: list[Shown] = []
    for c in r.cells:
        t = Table(
            title=f"{c.cc}, RTT {c.rtt_ms:g} ms ({res.status}; {c.repetitions} repetition(s), "
            f"{c.failed_repetitions} failed): a flow every {r.period_s:g} s, each step's second "
            "half measured; mean ± 95 % interval",
            columns=["flows", "ideal", "utilisation", "Jain", "newest / fair share"],
        )
        for s in c.steps:
            t.rows.append(
                [
                    str(s.active),
                    f"{s.ideal:.3f}",
                    pm(s.utilisation, s.utilisation_ci95, 3),
                    pm(s.jain, s.jain_ci95, 3),
                    pm(s.newest_share, s.newest_share_ci95, 3),
                ]
            )
        shown.append(t)
    return shown
