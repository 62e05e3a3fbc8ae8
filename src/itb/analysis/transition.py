"""The cost of a rate transition (INRIA RR-6874 §6.2): when a sender is told to go from
a low rate to a high one, the data it could have sent but did not while it got there,
expressed in seconds at the high rate.

With x(t) the wire rate at the bottleneck (the link emulator's 1 ms log), t0 the date of
the step and L the rate the sender holds once it has reached the step (its level):

    D(t) = ∫_{t0}^{t} (L − x(s)) ds        cost = max over t in [t0, t0 + span] of D(t) / L

D grows while the sender is below its level and stops growing once it is there; a
sender that then makes up for the deficit (an application cap counts what the profile
allowed since the start, so Reno catches up when the path has room) brings D down
again, which the maximum ignores: the cost is the lag itself. The level is the step's
rate on the wire (rate / payload share) for a sender that keeps it exactly, or the
level the sender settles at (UDT runs a few % above the rate it is set to); `level`
below measures that from the step's end.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _series(rows: pd.DataFrame, lo_ns: float, hi_ns: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Interval start (ns), length (s) and bits of the log rows that start in [lo, hi)."""
    t = rows["t_ns"].to_numpy(dtype=float)
    sel = (t >= lo_ns) & (t < hi_ns)
    order = np.argsort(t[sel])
    return (t[sel][order], rows["interval_s"].to_numpy(dtype=float)[sel][order],
            rows["bytes"].to_numpy(dtype=float)[sel][order] * 8)


def level(rows: pd.DataFrame, lo_ns: float, hi_ns: float) -> float | None:
    """The mean wire rate (bit/s) over [lo, hi): a sender's level once settled."""
    _t, dt, bits = _series(rows, lo_ns, hi_ns)
    return float(bits.sum() / dt.sum()) if dt.sum() > 0 else None


def cost(rows: pd.DataFrame, t0_ns: float, level_bps: float, span_s: float) -> float | None:
    """The largest deficit D(t) / L over (t0, t0 + span] (s); None without rows. The
    interval holding t0 counts for the part after t0."""
    if not level_bps > 0:
        raise ValueError(f"a level must be above 0, got {level_bps!r}")
    t, dt, bits = _series(rows, t0_ns - 0.01e9, t0_ns + span_s * 1e9)
    if t.size == 0:
        return None
    end = t + dt * 1e9
    keep = end > t0_ns
    t, dt, bits, end = t[keep], dt[keep], bits[keep], end[keep]
    # the share of each interval that lies after t0 (only the first one is cut)
    share = np.clip((end - np.maximum(t, t0_ns)) / (dt * 1e9), 0.0, 1.0)
    deficit = np.cumsum(share * (level_bps * dt - bits))
    return float(max(0.0, deficit.max()) / level_bps)


def reach(rows: pd.DataFrame, t0_ns: float, level_bps: float, span_s: float,
          share: float = 0.95, bin_s: float = 0.01) -> float | None:
    """Seconds from t0 until the rate over `bin_s` bins first reaches `share` of the level
    (None if it does not within the span)."""
    t, dt, bits = _series(rows, t0_ns, t0_ns + span_s * 1e9)
    if t.size == 0:
        return None
    k = np.floor((t - t0_ns) / (bin_s * 1e9)).astype(int)
    got = np.bincount(k, weights=bits) / np.maximum(np.bincount(k, weights=dt), 1e-12)
    hit = np.nonzero(got >= share * level_bps)[0]
    return float(hit[0] * bin_s) if hit.size else None
