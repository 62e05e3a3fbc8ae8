"""The analysis of `itb study profile pair`: each flow's lateness over the repetitions,
the pair's bursts at the bottleneck, and per pair and flow the margin each lateness limit
needs."""

from __future__ import annotations

import math

from itb.analysis.pursuit import (
    LATENESS_LIMITS_S,
    burst_of,
    cell_logs,
    lateness_values,
    margin_needed,
    pooled_burst,
    spread,
)
from itb.study.profile_pair.args import PairArgs
from itb.study.profile_pair.cells import PairCell
from itb.study.profile_pair.results import PairFlow, PairPoint, PairResults, PairThreshold
from itb.sweep.sweep import Sweep


def analyse(sweep: Sweep[PairCell], a: PairArgs) -> PairResults:
    points = []
    for cell in sweep.index.cells:
        tr, fwd = cell_logs(sweep.out, cell)
        flows, bursts = [], []
        for mech, plan in zip(cell.mechanisms, cell.flows):
            late, failed = (
                ([], 0)
                if tr is None
                else lateness_values(tr[tr["transfer"] == plan.flow], plan.predicted_s)
            )
            flows.append(
                PairFlow(
                    flow=plan.flow,
                    mechanism=mech,
                    input_steps=list(plan.input_steps),
                    volume=plan.volume,
                    predicted_s=plan.predicted_s,
                    lateness=spread(late, failed),
                )
            )
        if tr is not None and fwd is not None:
            for rep, g in tr.groupby("repetition"):
                lo, hi = g["start_ns"].min(), g["end_ns"].max()
                if math.isfinite(lo) and math.isfinite(hi):
                    bursts.append(burst_of(fwd[fwd["repetition"] == rep], lo, hi))
        points.append(
            PairPoint(
                combo=cell.combo,
                margin=cell.margin,
                rtt_ms=cell.rtt_ms,
                flows=flows,
                burst=pooled_burst(bursts),
            )
        )
    points.sort(key=lambda p: (p.combo, p.margin))
    thresholds = []
    for combo in dict.fromkeys(p.combo for p in points):
        mine = [p for p in points if p.combo == combo]
        for k, f in enumerate(mine[0].flows):
            for lim in LATENESS_LIMITS_S:
                thresholds.append(
                    PairThreshold(
                        combo=combo,
                        flow=f.flow,
                        mechanism=f.mechanism,
                        limit_s=lim,
                        margin=margin_needed([(p.margin, p.flows[k].lateness) for p in mine], lim),
                    )
                )
    res = PairResults(
        capacity_bps=a.capacity_bps,
        seconds=a.seconds,
        open_window=a.open_window,
        points=points,
        thresholds=thresholds,
    )
    res.save(sweep.out / "results.json")
    return res
