"""The statistics of ITB's metrics (docs/metrics.md): completion times, margins, Jain's
fairness index and least-squares fits, over plain sequences of numbers."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy.special import stdtrit  # Student's t quantile (scipy.stats: a second to import)

MARGIN_LEVELS = (68, 95)


def floats(values: Iterable[float | None]) -> np.ndarray:
    """1-d float array; None becomes NaN."""
    return pd.Series(list(values), dtype="float64").to_numpy()


# --- completion times --------------------------------------------------------------------


def completion_stats(times: Iterable[float | None]) -> dict:
    """T_min, T_mean, T_max, σ_T (population std, 1/N) and CoV = σ_T / T_mean, in seconds;
    σ_T and CoV are None for a single transfer.

    NaN/None are failed transfers: left out of the statistics and counted in n_failed.
    With no completed transfer every statistic is None.
    """
    t = floats(times)
    done = t[~np.isnan(t)]
    if np.isinf(done).any() or (done < 0).any():
        raise ValueError("completion times must be finite and >= 0 (NaN = failed)")
    out: dict = {"n": int(done.size), "n_failed": int(t.size - done.size)}
    if done.size == 0:
        return out | {"t_min": None, "t_mean": None, "t_max": None, "sigma_t": None, "cov": None}
    mean = float(done.mean())
    # σ_T over the N transfers of one run, with 1/N as the documents define it; one
    # transfer has no spread: missing, never 0
    sigma = float(done.std(ddof=0)) if done.size > 1 else None
    return out | {
        "t_min": float(done.min()),
        "t_mean": mean,
        "t_max": float(done.max()),
        "sigma_t": sigma,
        "cov": sigma / mean if sigma is not None and mean > 0 else None,
    }


def margins(times: Iterable[float | None]) -> dict:
    """Margin over T_mean that covers 68 % and 95 % of completions (predictability).

    mX_s = max(0, qX - T_mean) with qX numpy's "linear" percentile; mX_pct = mX_s / T_mean
    in percent. NaN (failed) times are left out.
    """
    t = floats(times)
    t = t[~np.isnan(t)]
    if t.size == 0:
        raise ValueError("margins need at least one completed transfer")
    if np.isinf(t).any():
        raise ValueError("completion times must be finite")
    mean = float(t.mean())
    out: dict = {"n": int(t.size), "t_mean": mean}
    for level in MARGIN_LEVELS:
        q = float(np.percentile(t, level, method="linear"))
        m = max(0.0, q - mean)
        out[f"q{level}_s"] = q
        out[f"m{level}_s"] = m
        out[f"m{level}_pct"] = m / mean * 100 if mean > 0 else None
    return out


# --- fairness and models -----------------------------------------------------------------


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index J = (Σx)² / (n·Σx²), in (0, 1]; 1 means equal shares."""
    x = floats(values)
    if x.size == 0:
        raise ValueError("jain_index of no values")
    if not np.isfinite(x).all() or (x < 0).any():
        raise ValueError("jain_index needs finite values >= 0")
    sq = float((x * x).sum())
    if sq == 0:
        raise ValueError("jain_index of all-zero values is undefined")
    if x.size == 1:
        return 1.0
    return float(x.sum()) ** 2 / (x.size * sq)


def fit_linear(x: Iterable[float], y: Iterable[float]) -> dict:
    """Least squares y = a·x + b with Pearson r and R² (= r² for one regressor).

    r and r2 are None when y is constant (no variance to explain).
    """
    xa, ya = floats(x), floats(y)
    if xa.size != ya.size:
        raise ValueError(f"x and y differ in length ({xa.size} vs {ya.size})")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise ValueError("fit_linear needs finite x and y")
    if np.unique(xa).size < 2:
        raise ValueError("fit_linear needs at least 2 distinct x values")
    dx, dy = xa - xa.mean(), ya - ya.mean()
    sxx, sxy, syy = float(dx @ dx), float(dx @ dy), float(dy @ dy)
    a = sxy / sxx
    b = float(ya.mean()) - a * float(xa.mean())
    r = None if syy == 0 else max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))
    return {"a": a, "b": b, "r": r, "r2": None if r is None else r * r, "n": int(xa.size)}


def mean_ci(values) -> tuple[float | None, float | None]:
    """Mean and the half-width of its 95 % Student-t interval (None with < 2 values)."""
    v = np.array([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    if v.size == 0:
        return None, None
    if v.size == 1:
        return float(v[0]), None
    half = stdtrit(v.size - 1, 0.975) * v.std(ddof=1) / math.sqrt(v.size)
    return float(v.mean()), float(half)
