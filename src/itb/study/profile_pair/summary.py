"""What `itb study profile pair` prints at the end: each flow's lateness per margin, and
the margin each lateness limit needs."""

from __future__ import annotations

from itb.study.profile_pair.args import PairArgs
from itb.study.profile_pair.results import PairResults
from itb.study.pursuit import margin_cell
from itb.study.registry import Shown, Table, fixed
from itb.sweep.sweep import Outcome


def tables(res: Outcome[PairResults], a: PairArgs) -> list[Shown]:
    r = res.results
    t = Table(
        title=f"lateness (s) of each flow against the margin ({res.status})",
        columns=["pair", "m", "flow", "runs", "failed", "lateness", "95 % ±", "max"],
    )
    for p in r.points:
        for f in p.flows:
            t.rows.append(
                [
                    p.combo,
                    f"{p.margin * 100:g} %",
                    f"{f.flow} ({f.mechanism})",
                    str(f.lateness.n),
                    str(f.lateness.n_failed),
                    fixed(f.lateness.mean, 3),
                    fixed(f.lateness.ci95, 3),
                    fixed(f.lateness.max, 3),
                ]
            )
    th = Table(title="margin needed", columns=["pair", "flow", "lateness below", "from margin"])
    for x in r.thresholds:
        th.rows.append(
            [x.combo, f"{x.flow} ({x.mechanism})", f"{x.limit_s:g} s", margin_cell(x.margin)]
        )
    return [t, th]
