"""What the profile-pursuit studies measure alike (INRIA RR-6874 §5.3, §6): spreads over
repetitions, the bottleneck's bursts, the margin a lateness series needs, and a cell's
transfers with its bottleneck's forward log.

Lateness = measured completion − predicted completion (s; negative: early). A failed
transfer is counted (`n_failed`), not dropped; a spread of one value has no interval.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel

from itb.analysis.cells import Cell, bottleneck_link, cell_table
from itb.analysis.series import interval_starts, select_link
from itb.analysis.statistics import mean_ci

FORMAT_VERSION = 1  # of the profile studies' results
LATENESS_LIMITS_S = (1.0, 0.5)  # the document's threshold, and a stricter one


class Spread(BaseModel):
    """Values over repetitions: mean with its 95 % Student-t half-width (None from one
    value), extremes, and the failures that gave no value."""

    n: int
    n_failed: int = 0
    mean: float | None = None
    ci95: float | None = None
    min: float | None = None
    max: float | None = None
    values: list[float] = []

    @property
    def upper(self) -> float | None:
        """The upper end of the 95 % interval; the value itself when there is one."""
        if self.mean is None:
            return None
        return self.mean + (self.ci95 or 0.0)


def spread(values: Iterable[float | None], failed: int = 0) -> Spread:
    vals = [float(v) for v in values if v is not None and np.isfinite(v)]
    mean, half = mean_ci(vals)
    return Spread(
        n=len(vals),
        n_failed=failed,
        mean=mean,
        ci95=half,
        min=min(vals) if vals else None,
        max=max(vals) if vals else None,
        values=vals,
    )


class Burst(BaseModel):
    """The wire rate at the bottleneck while a flow (or the pair) sent: the mean, the
    largest 1 ms rate, and their ratio (the overshoot RR-6874 §5.1 blames UDT for)."""

    mean_bps: float | None
    max_1ms_bps: float | None
    drops: int  # segments the bottleneck's queue dropped meanwhile

    @property
    def overshoot(self) -> float | None:
        if not self.mean_bps or self.max_1ms_bps is None:
            return None
        return self.max_1ms_bps / self.mean_bps


def burst_of(rows, lo_ns: float, hi_ns: float) -> Burst:
    """Burst over the log rows (one link, direction, repetition) starting in [lo, hi)."""
    t = interval_starts(rows).to_numpy(dtype=float)
    sel = (t >= lo_ns) & (t < hi_ns)
    dt = rows["interval_s"].to_numpy(dtype=float)[sel]
    bits = rows["bytes"].to_numpy(dtype=float)[sel] * 8
    drops = int(rows["drops_queue"].to_numpy()[sel].sum()) if "drops_queue" in rows else 0
    if dt.sum() <= 0:
        return Burst(mean_bps=None, max_1ms_bps=None, drops=drops)
    return Burst(
        mean_bps=float(bits.sum() / dt.sum()), max_1ms_bps=float((bits / dt).max()), drops=drops
    )


def pooled_burst(bursts: Sequence[Burst]) -> Burst:
    """Over repetitions: the mean of the means, the largest 1 ms rate, all drops."""
    means = [b.mean_bps for b in bursts if b.mean_bps is not None]
    peaks = [b.max_1ms_bps for b in bursts if b.max_1ms_bps is not None]
    return Burst(
        mean_bps=float(np.mean(means)) if means else None,
        max_1ms_bps=max(peaks) if peaks else None,
        drops=sum(b.drops for b in bursts),
    )


def margin_needed(points: Sequence[tuple[float, Spread]], limit_s: float) -> float | None:
    """The smallest margin from which on every point's lateness lies below `limit_s`
    (the upper end of its 95 % interval; the value itself from one repetition), every
    run completed; None when even the largest margin does not."""
    needed = None
    for m, s in sorted(points, key=lambda p: p[0], reverse=True):
        if s.n_failed or s.upper is None or s.upper >= limit_s:
            break
        needed = m
    return needed


def cell_logs(out: Path, cell: Cell) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """A cell's transfers table and its bottleneck's forward log (1 ms rows), None
    before its run made them."""
    tr, bn = cell_table(out, cell, "transfers"), cell_table(out, cell, "bottleneck")
    link = bottleneck_link(out, cell)
    return tr, None if bn is None or link is None else select_link(bn, "forward", link)


def lateness_values(rows: pd.DataFrame, predicted_s: float) -> tuple[list[float], int]:
    """Completion − prediction of the completed transfers among `rows`, and how many did
    not complete (counted, not dropped)."""
    done = rows["ok"].astype(bool) & np.isfinite(rows["completion_s"].to_numpy(dtype=float))
    return (rows.loc[done, "completion_s"] - predicted_s).tolist(), int((~done).sum())
