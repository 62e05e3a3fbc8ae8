"""The cost of a rate transition (INRIA RR-6874 §6.2): when a sender is told to go from
a low rate to a high one, the data it could have sent but did not while it got there,
expressed in seconds at the high rate.

With x(t) the wire rate at the bottleneck (the link emulator's 1 ms log), t0 the date of
the step and L the rate the sender holds once it has reached the step (its level):

    D(t) = ∫_{t0}^{t} (L − x(s)) ds        cost = max over t in [t0, t0 + span] of D(t) / L

D grows while the sender is below its level and stops growing once it is there; a
sender that then makes up for the deficit (an application cap counts what the profile
allowed since the start, so Reno catches up when the path has room) brings D down
again, which the maximum ignores: the cost is the lag itself. When D has (nearly)
peaked the sender has settled (`settled`): a 10 ms rate would say so too early for a
sender that bursts (slow start sends a window at line rate, then waits for an RTT). The level is the step's
rate on the wire (rate / payload share) for a sender that keeps it exactly, or the
level the sender settles at (UDT runs a few % above the rate it is set to); `level`
below measures that from the step's end.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from itb.analysis.series import interval_starts
from itb.analysis.steps import window_rate


def _series(
    rows: pd.DataFrame, lo_ns: float, hi_ns: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Interval start (ns), length (s) and bits of the log rows that start in [lo, hi)."""
    t = interval_starts(rows).to_numpy(dtype=float)
    sel = (t >= lo_ns) & (t < hi_ns)
    order = np.argsort(t[sel])
    return (
        t[sel][order],
        rows["interval_s"].to_numpy(dtype=float)[sel][order],
        rows["bytes"].to_numpy(dtype=float)[sel][order] * 8,
    )


def level(rows: pd.DataFrame, lo_ns: float, hi_ns: float) -> float | None:
    """The mean wire rate (bit/s) over [lo, hi): a sender's level once settled."""
    return window_rate(rows, lo_ns, hi_ns)


def _deficit(rows: pd.DataFrame, t0_ns: float, level_bps: float, span_s: float):
    """(interval ends after t0 (s), D at each of them (s of the level)); None without rows.
    The interval holding t0 counts for the part after t0."""
    if not level_bps > 0:
        raise ValueError(f"a level must be above 0, got {level_bps!r}")
    t, dt, bits = _series(rows, t0_ns - 0.01e9, t0_ns + span_s * 1e9)
    if t.size == 0:
        return None
    end = t + dt * 1e9
    keep = end > t0_ns
    t, dt, bits, end = t[keep], dt[keep], bits[keep], end[keep]
    if t.size == 0:
        return None
    # the share of each interval that lies after t0 (only the first one is cut)
    share = np.clip((end - np.maximum(t, t0_ns)) / (dt * 1e9), 0.0, 1.0)
    return (end - t0_ns) / 1e9, np.cumsum(share * (level_bps * dt - bits)) / level_bps


def cost(rows: pd.DataFrame, t0_ns: float, level_bps: float, span_s: float) -> float | None:
    """The largest deficit D(t) / L over (t0, t0 + span] (s); None without rows."""
    curve = _deficit(rows, t0_ns, level_bps, span_s)
    return None if curve is None else float(max(0.0, curve[1].max()))


def settled(
    rows: pd.DataFrame, t0_ns: float, level_bps: float, span_s: float, share: float = 0.9
) -> float | None:
    """When the deficit first reaches `share` of its largest value (s after t0): about
    when the sender carries its level on average, however bursty it is. Not the peak
    itself: once a sender is at its level, D only wanders by the log's packet-sized
    noise, and its maximum may fall anywhere later. 0 for a sender never behind."""
    curve = _deficit(rows, t0_ns, level_bps, span_s)
    if curve is None:
        return None
    at, d = curve
    top = d.max()
    if top <= 0:
        return 0.0
    return float(at[int(np.argmax(d >= share * top))])


def emulator_lag_us(rows: pd.DataFrame, lo_ns: float, hi_ns: float) -> int:
    """The largest lag (µs) with which the link emulator released a segment after its
    scheduled time (its `max_lag_us`: it was short of CPU) in the rows that start in
    [lo, hi); 0 when the log has no such column."""
    if "max_lag_us" not in rows:
        return 0
    t = interval_starts(rows).to_numpy(dtype=float)
    lags = rows["max_lag_us"].to_numpy()[(t >= lo_ns) & (t < hi_ns)]
    return int(lags.max()) if lags.size else 0
