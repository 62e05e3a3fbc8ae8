"""What `itb study profile transition` prints at the end: the cost of each step."""

from __future__ import annotations

from itb.study.profile_transition.args import TransitionArgs
from itb.study.profile_transition.results import TransitionResults
from itb.study.registry import Shown, Table, fixed
from itb.sweep.sweep import Outcome


def ms(x: float | None) -> str:
    return fixed(None if x is None else x * 1000, 1)


def tables(res: Outcome[TransitionResults], a: TransitionArgs) -> list[Shown]:
    t = Table(
        title=f"cost of a {a.low_bps / 1e6:g} Mbit/s → high step (ms) ({res.status})",
        columns=[
            "mechanism",
            "RTT (ms)",
            "high (Mbit/s)",
            "runs",
            "failed",
            "disturbed",
            "cost",
            "95 % ±",
            "max",
            "settled",
        ],
    )
    for p in res.results.points:
        c = p.cost
        t.rows.append(
            [
                p.mechanism,
                f"{p.rtt_ms:g}",
                f"{p.high_bps / 1e6:g}",
                str(c.n),
                str(p.failed),
                str(p.disturbed),
                ms(c.mean),
                ms(c.ci95),
                ms(c.max),
                ms(p.settled.mean),
            ]
        )
    return [t]
