"""The analysis of `itb study multiplexing`: per cell and repetition whose forward
transfers all completed, their mean and latest completion time and the CoV of the
bottleneck's forward throughput (1 s bins, from the first start to the last forward
end); per protocol, each K's latest completion time against the first K's."""

from __future__ import annotations

import numpy as np

from itb.analysis.cells import bottleneck_link, cell_table
from itb.analysis.compare import compare_all
from itb.analysis.series import bottleneck_throughput
from itb.analysis.statistics import mean_ci
from itb.study.longlived import complete_repetitions, rep_zeros
from itb.study.multiplexing.args import MultiplexingArgs
from itb.study.multiplexing.cells import MultiplexingCell
from itb.study.multiplexing.results import Point, Results
from itb.sweep.sweep import Sweep


def runs(sweep: Sweep[MultiplexingCell], c: MultiplexingCell) -> tuple[list[tuple], int]:
    """Per complete repetition (T_mean, T_max, swing); and the failed forward transfers."""
    tr, bn = cell_table(sweep.out, c, "transfers"), cell_table(sweep.out, c, "bottleneck")
    if tr is None:
        return [], 0
    x = None
    if bn is not None:
        x = bottleneck_throughput(
            bn, "forward", 1.0, rep_start=rep_zeros(tr), link=bottleneck_link(sweep.out, c)
        )
    complete, failed = complete_repetitions(tr)
    out = []
    for rep, g in complete:
        times = g["completion_s"].astype(float)
        end_s = float(((g["end_ns"] - g["rep_start_ns"]) / 1e9).max())
        swing = None
        if x is not None:
            bins = x[(x["repetition"] == rep) & (x["t_s"] > 1.0) & (x["t_s"] <= np.floor(end_s))]
            v = bins["throughput_bps"].astype(float)
            swing = float(v.std(ddof=0) / v.mean()) if len(v) >= 2 and v.mean() > 0 else None
        out.append((float(times.mean()), float(times.max()), swing))
    return out, failed


def analyse(sweep: Sweep[MultiplexingCell], a: MultiplexingArgs) -> Results:
    measured = []
    for c in sweep.index.cells:
        r, failed = runs(sweep, c)
        measured.append((c, r, failed))
    firsts: dict[str, tuple[MultiplexingCell, list[tuple]]] = {}
    for c, r, _ in measured:
        firsts.setdefault(c.cc, (c, r))
    pairs = [
        (
            f"K = {c.k}",
            [x[1] for x in r],
            f"K = {firsts[c.cc][0].k}",
            [x[1] for x in firsts[c.cc][1]],
        )
        for c, r, _ in measured
        if firsts[c.cc][0] is not c
    ]
    compared = iter(compare_all(pairs))
    points = []
    for c, r, failed in measured:
        t, t_ci = mean_ci(x[0] for x in r)
        m, m_ci = mean_ci(x[1] for x in r)
        s, s_ci = mean_ci(x[2] for x in r)
        points.append(
            Point(
                name=c.name,
                cc=c.cc,
                k=c.k,
                forward_sources=c.forward_sources,
                reverse_sources=c.reverse_sources,
                repetitions=len(r),
                failed=failed,
                t_mean=t,
                t_mean_ci95=t_ci,
                t_max_runs=[x[1] for x in r],
                t_max=m,
                t_max_ci95=m_ci,
                swing=s,
                swing_ci95=s_ci,
                against_first=None if firsts[c.cc][0] is c else next(compared),
            )
        )
    res = Results(points=points)
    res.save(sweep.out / "results.json")
    return res
