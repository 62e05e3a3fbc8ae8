"""The analysis of `itb study pacing-vs-tbf`: per cell and repetition the flows' mean
completion time and Jain's index of their throughputs (volume / T); per point the token
bucket's T against pacing's, one comparison table over the whole study."""

from __future__ import annotations

import pandas as pd

from itb.analysis.cells import cell_transfers
from itb.analysis.compare import compare_all
from itb.analysis.statistics import mean_ci
from itb.study.longlived import complete_repetitions, jain_or_none
from itb.study.pacing_tbf.cells import PacingTbfCell
from itb.study.pacing_tbf.results import Cell, Penalty, Results
from itb.sweep.sweep import Sweep


def runs(tr: pd.DataFrame | None, flows: int) -> tuple[list[float], list[float | None], int]:
    """Per repetition whose every flow completed: the mean completion time and Jain's
    index of the throughputs; and the failed transfers of every repetition."""
    if tr is None:
        return [], [], 0
    complete, failed = complete_repetitions(tr, flows)
    t_runs, jains = [], []
    for _, g in complete:
        times = g["completion_s"].astype(float)
        t_runs.append(float(times.mean()))
        jains.append(jain_or_none(list(g["bytes"].astype(float) / times)))
    return t_runs, jains, failed


def analyse(sweep: Sweep[PacingTbfCell]) -> Results:
    cells = []
    for c in sweep.index.cells:
        t_runs, jains, failed = runs(cell_transfers(sweep.out, c), c.flows)
        t, t_ci = mean_ci(t_runs)
        s, s_ci = mean_ci(x / c.ideal_s for x in t_runs)
        j, j_ci = mean_ci(jains)
        cells.append(
            Cell(
                name=c.name,
                cc=c.cc,
                rtt_ms=c.rtt_ms,
                buffer_bytes=c.buffer_bytes,
                pattern=c.pattern,
                mechanism=c.mechanism,
                ideal_s=c.ideal_s,
                repetitions=len(t_runs),
                failed=failed,
                t_runs=t_runs,
                t_mean=t,
                t_mean_ci95=t_ci,
                slowdown=s,
                slowdown_ci95=s_ci,
                jain=j,
                jain_ci95=j_ci,
            )
        )
    points = list(dict.fromkeys((c.cc, c.rtt_ms, c.buffer_bytes, c.pattern) for c in cells))
    by = {(c.cc, c.rtt_ms, c.buffer_bytes, c.pattern, c.mechanism): c for c in cells}
    pairs = [p for p in points if (*p, "tbf") in by and (*p, "pacing") in by]
    compared = compare_all(
        [
            ("token bucket", by[(*p, "tbf")].t_runs, "pacing", by[(*p, "pacing")].t_runs)
            for p in pairs
        ]
    )
    penalties = [
        Penalty(cc=p[0], rtt_ms=p[1], buffer_bytes=p[2], pattern=p[3], comparison=comp)
        for p, comp in zip(pairs, compared)
    ]
    res = Results(cells=cells, penalties=penalties)
    res.save(sweep.out / "results.json")
    return res
