"""The analysis of `itb study rtt-sweep`: per cell and repetition that ended ok, every
flow's goodput over the cell's window (itb.study.longlived.window_goodputs), their mean
as a share of C_a, Jain's index and the utilisation; per point the means over
repetitions with their 95 % intervals."""

from __future__ import annotations

from itb.analysis.cells import cell_table
from itb.analysis.statistics import mean_ci
from itb.study.longlived import SOURCES_K, jain_or_none, repetitions_of, window_goodputs
from itb.study.rtt_sweep.args import RttSweepArgs
from itb.study.rtt_sweep.cells import RttSweepCell
from itb.study.rtt_sweep.results import Point, Repetition, Results
from itb.sweep.sweep import Sweep


def repetitions(sweep: Sweep[RttSweepCell], cell: RttSweepCell) -> list[Repetition]:
    ok, _ = repetitions_of(sweep.out / cell.run)
    tr, samples = cell_table(sweep.out, cell, "transfers"), cell_table(sweep.out, cell, "samples")
    if tr is None or samples is None or not ok:
        return []
    access = cell.capacity_bps / SOURCES_K
    by_rep = window_goodputs(samples, tr, *cell.window_s)
    out = []
    for rep in ok:
        got = by_rep.get(rep, {})
        g = [got.get(f"f{k + 1}", 0.0) for k in range(cell.flows)]
        out.append(
            Repetition(
                repetition=rep,
                goodputs_bps=g,
                mean_share=sum(g) / len(g) / access,
                jain=jain_or_none(g),
                utilisation=sum(g) / cell.capacity_bps,  # payload: below 1
            )
        )
    return out


def analyse(sweep: Sweep[RttSweepCell], a: RttSweepArgs) -> Results:
    points = []
    for c in sweep.index.cells:
        reps = repetitions(sweep, c)
        _, failed = repetitions_of(sweep.out / c.run)
        share, share_ci = mean_ci(r.mean_share for r in reps)
        jain, jain_ci = mean_ci(r.jain for r in reps)
        util, util_ci = mean_ci(r.utilisation for r in reps)
        access = c.capacity_bps / SOURCES_K
        points.append(
            Point(
                name=c.name,
                cc=c.cc,
                flows=c.flows,
                rtt_ms=c.rtt_ms,
                c_g=c.flows / SOURCES_K,
                repetitions=reps,
                failed_repetitions=failed,
                mean_goodput_bps=None if share is None else share * access,
                mean_share=share,
                mean_share_ci95=share_ci,
                jain=jain,
                jain_ci95=jain_ci,
                utilisation=util,
                utilisation_ci95=util_ci,
            )
        )
    res = Results(
        capacity_bps=a.capacity_bps,
        access_bps=a.capacity_bps / SOURCES_K,
        window_s=a.seconds,
        points=points,
    )
    res.save(sweep.out / "results.json")
    return res
