"""Polynomial least squares with its coefficient of determination, for the models the
predictability report fits (INRIA RR-6256 §4.2.2: linear T_mean = a·C_g + b for most
variants, quadratic a·C_g² + b·C_g + c for Scalable)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def fit_poly(x: Iterable[float], y: Iterable[float], degree: int) -> dict:
    """Least squares y = Σ coef[i]·x^(degree−i); R² = 1 − SS_res/SS_tot (None when y is
    constant). Needs at least degree + 1 distinct x values."""
    xa = np.asarray(list(x), dtype=float)
    ya = np.asarray(list(y), dtype=float)
    if xa.size != ya.size:
        raise ValueError(f"x and y differ in length ({xa.size} vs {ya.size})")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise ValueError("fit_poly needs finite x and y")
    if degree < 1:
        raise ValueError(f"degree must be at least 1, got {degree}")
    if np.unique(xa).size <= degree:
        raise ValueError(f"a degree-{degree} fit needs at least {degree + 1} distinct x values")
    coef = np.polyfit(xa, ya, degree)
    resid = ya - np.polyval(coef, xa)
    ss_tot = float(((ya - ya.mean()) ** 2).sum())
    r2 = None if ss_tot == 0 else 1 - float(resid @ resid) / ss_tot
    return {"coef": [float(c) for c in coef], "r2": r2, "n": int(xa.size)}
