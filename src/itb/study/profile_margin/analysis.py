"""The analysis of `itb study profile margin`: each point's lateness over its repetitions
and the bottleneck's bursts while it sent; per RTT, the margin each lateness limit needs."""

from __future__ import annotations

from itb.analysis.pursuit import (
    LATENESS_LIMITS_S,
    Burst,
    burst_of,
    cell_logs,
    lateness_values,
    margin_needed,
    pooled_burst,
    spread,
)
from itb.study.profile_margin.args import MarginArgs
from itb.study.profile_margin.cells import MarginCell
from itb.study.profile_margin.results import MarginPoint, MarginResults, MarginThreshold
from itb.sweep.sweep import Sweep


def analyse(sweep: Sweep[MarginCell], a: MarginArgs) -> MarginResults:
    points = []
    for cell in sweep.index.cells:
        tr, fwd = cell_logs(sweep.out, cell)
        late: list[float] = []
        failed = 0
        bursts: list[Burst] = []
        if tr is not None:
            mine = tr[tr["transfer"] == "m"]
            late, failed = lateness_values(mine, cell.predicted_s)
            if fwd is not None:
                for row in mine[mine["ok"].astype(bool)].itertuples():
                    bursts.append(
                        burst_of(fwd[fwd["repetition"] == row.repetition], row.start_ns, row.end_ns)
                    )
        points.append(
            MarginPoint(
                rtt_ms=cell.rtt_ms,
                margin=cell.margin,
                target_bps=cell.target_bps,
                input_bps=cell.input_bps,
                volume=cell.volume,
                predicted_s=cell.predicted_s,
                lateness=spread(late, failed),
                burst=pooled_burst(bursts),
            )
        )
    points.sort(key=lambda p: (p.rtt_ms, p.margin))
    thresholds = [
        MarginThreshold(
            rtt_ms=rtt,
            limit_s=lim,
            margin=margin_needed([(p.margin, p.lateness) for p in points if p.rtt_ms == rtt], lim),
        )
        for rtt in sorted({p.rtt_ms for p in points})
        for lim in LATENESS_LIMITS_S
    ]
    res = MarginResults(
        mechanism=a.mechanism.name,
        capacity_bps=a.capacity_bps,
        seconds=a.seconds,
        open_window=a.open_window,
        points=points,
        thresholds=thresholds,
    )
    res.save(sweep.out / "results.json")
    return res
