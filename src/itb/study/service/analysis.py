"""The analysis of `itb study service`: each transfer's finish date in its repetition
(its last byte received, from the repetition's zero, less the lead) against its request's
deadline and its plan."""

from __future__ import annotations

import numpy as np
import pandas as pd

from itb.analysis.cells import cell_transfers
from itb.study.service.cells import ServiceCell
from itb.study.service.results import Cell, Results
from itb.sweep.sweep import Sweep


def _pct(x: list[float], q: float) -> float | None:
    return float(np.percentile(x, q)) if x else None


def _mean(x: list[float]) -> float | None:
    return float(np.mean(x)) if x else None


def cell_result(c: ServiceCell, tr: pd.DataFrame | None, planned: set[str] | None) -> Cell:
    """`planned`: the requests a planned policy admitted on the same workload (TS1's misses
    are also counted among them: the same requests)."""
    req = {r.id: r for r in c.requests if r.admitted}
    late, plan_late, margin, f1, span, f2 = [], [], [], [], [], []
    reps = failed = misses = transfers = 0
    missed_ids: list[str] = []
    if tr is not None:
        fwd = tr[tr["direction"] == "forward"]
        for _, g in fwd.groupby("repetition", sort=True):
            reps += 1
            starts, ends, moved = [], [], 0.0
            for row in g.itertuples():
                r = req.get(str(row.transfer))
                if r is None:
                    continue
                transfers += 1
                ok = bool(row.ok) and not pd.isna(row.completion_s)
                if not ok:
                    failed += 1
                    misses += 1
                    missed_ids.append(r.id)
                    continue
                finish = (row.end_ns - row.rep_start_ns) / 1e9 - c.lead_s
                start = r.start_s if r.start_s is not None else r.release_s
                late.append(finish - r.deadline_s)
                if finish > r.deadline_s:
                    misses += 1
                    missed_ids.append(r.id)
                if r.finish_s is not None:
                    plan_late.append(finish - r.finish_s)
                    if c.policy == "TS1":
                        margin.append(1 - (r.finish_s - r.release_s) / (finish - r.release_s))
                f1.append(finish - start)
                starts.append(start)
                ends.append(finish)
                moved += float(row.bytes)
            if ends:
                s = max(ends) - min(starts)
                span.append(s)
                f2.append(moved * 8 / (c.b_in_bps * s))
    return Cell(
        name=c.name, workload=c.workload, policy=c.policy, cc=c.cc, mechanism=c.mechanism,
        requests=len(c.requests), admitted=len(req), optimum=c.optimum,
        planning_s=c.planning_s, repetitions=reps, transfers=transfers, failed=failed,
        misses=int(misses),
        misses_of_planned=(
            sum(x in planned for x in missed_ids) if planned is not None and c.policy == "TS1"
            else None
        ),
        late_p50_s=_pct(late, 50), late_p99_s=_pct(late, 99),
        late_max_s=max(late) if late else None,
        plan_late_p50_s=_pct(plan_late, 50), plan_late_p99_s=_pct(plan_late, 99),
        f1_s=max(f1) if f1 else None, makespan_s=_mean(span), f2=_mean(f2),
        margin_p68=_pct(margin, 68), margin_p95=_pct(margin, 95),
    )  # fmt: skip


def analyse(sweep: Sweep[ServiceCell]) -> Results:
    cells = sweep.index.cells
    planned = {
        c.workload: {r.id for r in c.requests if r.admitted}
        for c in reversed(cells)  # the first planned cell of a workload wins
        if c.policy != "TS1"
    }
    res = Results(
        cells=[cell_result(c, cell_transfers(sweep.out, c), planned.get(c.workload)) for c in cells]
    )
    res.save(sweep.out / "results.json")
    return res
