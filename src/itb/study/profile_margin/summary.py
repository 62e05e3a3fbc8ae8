"""What `itb study profile margin` prints at the end: the lateness per point, and the
margin each lateness limit needs."""

from __future__ import annotations

from itb.study.profile_margin.args import MarginArgs
from itb.study.profile_margin.results import MarginResults
from itb.study.pursuit import margin_cell
from itb.study.registry import Shown, Table, fixed
from itb.sweep.sweep import Outcome


def tables(res: Outcome[MarginResults], a: MarginArgs) -> list[Shown]:
    r = res.results
    t = Table(
        title=f"{r.mechanism}: lateness (s) against the margin ({res.status})",
        columns=["RTT (ms)", "m", "runs", "failed", "lateness", "95 % ±", "max", "max 1 ms / mean"],
    )
    for p in r.points:
        t.rows.append(
            [
                f"{p.rtt_ms:g}",
                f"{p.margin * 100:g} %",
                str(p.lateness.n),
                str(p.lateness.n_failed),
                fixed(p.lateness.mean, 3),
                fixed(p.lateness.ci95, 3),
                fixed(p.lateness.max, 3),
                fixed(p.burst.overshoot, 3),
            ]
        )
    th = Table(title="margin needed", columns=["RTT (ms)", "lateness below", "from margin"])
    for x in r.thresholds:
        th.rows.append([f"{x.rtt_ms:g}", f"{x.limit_s:g} s", margin_cell(x.margin)])
    return [t, th]
