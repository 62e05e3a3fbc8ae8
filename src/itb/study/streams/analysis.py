"""The analysis of `itb study streams`: per cell and repetition that ended ok, every
node's goodput over the window (itb.study.longlived.window_goodputs), their total and
Jain's index; per point the means over repetitions with their 95 % intervals."""

from __future__ import annotations

from itb.analysis.cells import cell_table
from itb.analysis.statistics import mean_ci
from itb.study.longlived import jain_or_none, repetitions_of, window_goodputs
from itb.study.streams.args import StreamsArgs
from itb.study.streams.cells import StreamsCell
from itb.study.streams.results import Point, Results
from itb.sweep.sweep import Sweep


def analyse(sweep: Sweep[StreamsCell], a: StreamsArgs) -> Results:
    points = []
    for c in sweep.index.cells:
        ok, failed = repetitions_of(sweep.out / c.run)
        tr, samples = cell_table(sweep.out, c, "transfers"), cell_table(sweep.out, c, "samples")
        totals, jains = [], []
        if tr is not None and samples is not None:
            by_rep = window_goodputs(samples, tr, *c.window_s)
            for rep in ok:
                got = by_rep.get(rep, {})
                g = [got.get(f"f{k + 1}", 0.0) for k in range(c.nodes)]
                totals.append(sum(g))
                jains.append(jain_or_none(g))
        total, total_ci = mean_ci(totals)
        util, util_ci = mean_ci(t / c.capacity_bps for t in totals)
        jain, jain_ci = mean_ci(jains)
        points.append(
            Point(
                name=c.name,
                cc=c.cc,
                streams=c.streams,
                repetitions=len(totals),
                failed_repetitions=failed,
                total_bps=total,
                total_bps_ci95=total_ci,
                utilisation=util,
                utilisation_ci95=util_ci,
                stream_mean_bps=None if total is None else total / (c.nodes * c.streams),
                jain=jain,
                jain_ci95=jain_ci,
            )
        )
    res = Results(capacity_bps=a.capacity_bps, nodes=a.nodes, window_s=a.seconds, points=points)
    res.save(sweep.out / "results.json")
    return res
