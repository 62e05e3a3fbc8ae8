"""The analysis of `itb study incremental`: per cell, repetition that ended ok and step
(k flows started; the second half of the step measured, so the newest flow's start is
behind it), the flows' goodputs (itb.study.longlived.window_goodputs), their sum over C,
Jain's index and the newest flow's share; per step the means over repetitions with
their 95 % intervals; the bottleneck's throughput in 1 s bins for the figure."""

from __future__ import annotations

from itb.analysis.cells import bottleneck_link, cell_table
from itb.analysis.series import bottleneck_throughput
from itb.analysis.statistics import mean_ci
from itb.study.incremental.args import IncrementalArgs
from itb.study.incremental.cells import IncrementalCell
from itb.study.incremental.results import CellResult, Results, Series, Step
from itb.study.longlived import (
    SOURCES_K,
    jain_or_none,
    rep_zeros,
    repetitions_of,
    window_goodputs,
)
from itb.sweep.sweep import Sweep


def steps(sweep: Sweep[IncrementalCell], c: IncrementalCell, ok: list[int]) -> list[Step]:
    tr, samples = cell_table(sweep.out, c, "transfers"), cell_table(sweep.out, c, "samples")
    access = c.capacity_bps / SOURCES_K
    out = []
    for k in range(c.flows):
        active = k + 1
        fair = min(access, c.capacity_bps / active)
        util, jain, newest = [], [], []
        if tr is not None and samples is not None:
            window = (k + 0.5) * c.period_s, (k + 1) * c.period_s
            by_rep = window_goodputs(samples, tr, *window)
            for rep in ok:
                got = by_rep.get(rep, {})
                g = [got.get(f"f{j + 1}", 0.0) for j in range(active)]
                util.append(sum(g) / c.capacity_bps)
                jain.append(jain_or_none(g))
                newest.append(g[-1] / fair)
        u, u_ci = mean_ci(util)
        j, j_ci = mean_ci(jain)
        n, n_ci = mean_ci(newest)
        out.append(
            Step(
                active=active,
                ideal=min(active * access, c.capacity_bps) / c.capacity_bps,
                utilisation=u,
                utilisation_ci95=u_ci,
                jain=j,
                jain_ci95=j_ci,
                newest_share=n,
                newest_share_ci95=n_ci,
            )
        )
    return out


def series(sweep: Sweep[IncrementalCell], c: IncrementalCell, ok: list[int]) -> list[Series]:
    tr, bn = cell_table(sweep.out, c, "transfers"), cell_table(sweep.out, c, "bottleneck")
    if tr is None or bn is None:
        return []
    x = bottleneck_throughput(
        bn, "forward", 1.0, rep_start=rep_zeros(tr), link=bottleneck_link(sweep.out, c)
    )
    end = c.flows * c.period_s
    out = []
    for rep in ok:
        rows = x[(x["repetition"] == rep) & (x["t_s"] > 0) & (x["t_s"] <= end + 1e-9)]
        out.append(
            Series(
                repetition=rep,
                t_s=[float(t) for t in rows["t_s"]],
                throughput_bps=[float(v) for v in rows["throughput_bps"]],
            )
        )
    return out


def analyse(sweep: Sweep[IncrementalCell], a: IncrementalArgs) -> Results:
    cells = []
    for c in sweep.index.cells:
        ok, failed = repetitions_of(sweep.out / c.run)
        cells.append(
            CellResult(
                name=c.name,
                cc=c.cc,
                rtt_ms=c.rtt_ms,
                repetitions=len(ok),
                failed_repetitions=failed,
                steps=steps(sweep, c, ok),
                series=series(sweep, c, ok),
            )
        )
    res = Results(
        capacity_bps=a.capacity_bps,
        access_bps=a.capacity_bps / SOURCES_K,
        period_s=a.period,
        cells=cells,
    )
    res.save(sweep.out / "results.json")
    return res
