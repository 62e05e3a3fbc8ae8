"""The analysis of `itb study friendliness`: per repetition and group (the sources of one
congestion control), the forward transfers' mean completion time; per point the ratio
T_reference / T_tested and what the tested protocol costs the reference: its T next to the
tested protocol against its T alone, the reference fixed by the plan (itb.analysis.compare:
Fieller's interval, Holm's steps over every point of the study)."""

from __future__ import annotations

import pandas as pd

from itb.analysis.cells import cell_transfers
from itb.analysis.compare import compare_all
from itb.analysis.statistics import mean_ci
from itb.study.friendliness.cells import FriendlinessCell
from itb.study.friendliness.plan import ALONE
from itb.study.friendliness.results import Group, GroupRun, Point, Results
from itb.suite.classes import DATA_CENTRE_K
from itb.sweep.sweep import Sweep


def group_runs(transfers: pd.DataFrame) -> list[GroupRun]:
    """Per repetition and congestion control (the one asked for: `cc`), the forward
    transfers' count, failures and mean completion time."""
    fwd = transfers[transfers["direction"] == "forward"]
    out = []
    for (rep, cc), g in fwd.groupby(["repetition", "cc"], sort=True):
        ok = g["ok"].astype(bool)  # a corrupt window is not ok (itb.analysis.window)
        times = g.loc[ok, "completion_s"].dropna()
        out.append(
            GroupRun(
                repetition=int(rep),
                cc=str(cc),
                sources=int(g["streams"].sum()),
                completed=int(times.size),
                failed=int(len(g) - times.size),
                t_mean=float(times.mean()) if times.size else None,
            )
        )
    return out


def ratios(runs: list[GroupRun], tested: str, reference: str) -> list[float]:
    """T_reference / T_tested of every repetition where both groups completed transfers."""
    by = {(r.repetition, r.cc): r for r in runs}
    out = []
    for rep in sorted({r.repetition for r in runs}):
        t, ref = by.get((rep, tested)), by.get((rep, reference))
        if t and ref and t.t_mean and ref.t_mean is not None:
            out.append(ref.t_mean / t.t_mean)
    return out


def _runs(sweep: Sweep[FriendlinessCell], cell: FriendlinessCell) -> list[GroupRun]:
    tr = cell_transfers(sweep.out, cell)
    return group_runs(tr) if tr is not None and len(tr) else []


def _group(runs: list[GroupRun], cc: str, sources: int) -> Group:
    mine = [r for r in runs if r.cc == cc]
    t, ci = mean_ci(r.t_mean for r in mine)
    return Group(
        cc=cc,
        sources=max((r.sources for r in mine), default=sources),
        repetitions=len(mine),
        completed=sum(r.completed for r in mine),
        failed=sum(r.failed for r in mine),
        t_mean=t,
        t_mean_ci95=ci,
    )


def _sources(cell: FriendlinessCell, cc: str) -> int:
    n = int(round(cell.c_g_realised * DATA_CENTRE_K))
    if cell.tested == ALONE:
        return n
    return (n + 1) // 2 if cc == cell.tested else n // 2


def analyse(sweep: Sweep[FriendlinessCell]) -> Results:
    cells = sweep.index.cells
    alone = {c.c_g: c for c in cells if c.tested == ALONE}
    pending = []
    for c in (c for c in cells if c.tested != ALONE):
        runs, ref = _runs(sweep, c), c.reference
        alone_cell = alone.get(c.c_g)
        base_runs = _runs(sweep, alone_cell) if alone_cell else []
        rs = ratios(runs, c.tested, ref)
        r, r_ci = mean_ci(rs)
        pending.append((c, runs, base_runs, r, r_ci, len(rs)))
    # one table: every point's "reference next to the tested vs alone", each at 1 − α/m
    cost = compare_all(
        [
            (
                f"{c.reference} next to {c.tested}",
                [x.t_mean for x in runs if x.cc == c.reference],
                f"{c.reference} alone",
                [x.t_mean for x in base if x.cc == c.reference],
            )
            for c, runs, base, *_ in pending
        ]
    )
    points = []
    for (c, runs, base, r, r_ci, n), comp in zip(pending, cost):
        ref = c.reference
        points.append(
            Point(
                name=c.name,
                tested=c.tested,
                reference=ref,
                c_g=c.c_g,
                c_g_realised=c.c_g_realised,
                tested_group=_group(runs, c.tested, _sources(c, c.tested)),
                reference_group=_group(runs, ref, _sources(c, ref)),
                reference_alone=_group(base, ref, _sources(alone[c.c_g], ref)) if base else None,
                ratio=r,
                ratio_ci95=r_ci,
                ratio_runs=n,
                reference_cost=comp if base else None,
            )
        )
    res = Results(points=points)
    res.save(sweep.out / "results.json")
    return res
