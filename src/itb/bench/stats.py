"""The benchmark table: application × class × protocol → completion-time statistics and
the other metrics, as means over repetitions with 95 % confidence intervals, and a
significance test before one protocol is called better than another."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as st

METRICS = ("t_mean", "t_min", "t_max", "sigma_t", "cov", "jain", "efficiency", "utilisation")
ALPHA = 0.05


def per_repetition(metrics: dict) -> list[dict]:
    """One row per repetition that ran forward transfers, from a run's metrics.json; one
    whose transfers all failed (or were corrupt) keeps its counts, with no statistics."""
    rows = []
    for r in metrics.get("repetitions", []):
        c = r.get("completion") or {}
        if not c.get("n") and not c.get("n_failed"):
            continue
        rows.append({"repetition": r["repetition"], "n": c.get("n", 0),
                     "n_failed": c.get("n_failed", 0), "n_corrupt": r.get("n_corrupt", 0),
                     "t_mean": c.get("t_mean"), "t_min": c.get("t_min"), "t_max": c.get("t_max"),
                     "sigma_t": c.get("sigma_t"), "cov": c.get("cov"), "jain": r.get("jain"),
                     "efficiency": r.get("efficiency"), "utilisation": r.get("utilisation")})
    return rows


def mean_ci(values) -> tuple[float | None, float | None]:
    """Mean and the half-width of its 95 % Student-t interval (None with < 2 values)."""
    v = np.array([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    if v.size == 0:
        return None, None
    if v.size == 1:
        return float(v[0]), None
    half = st.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return float(v.mean()), float(half)


@dataclass(frozen=True)
class CellKey:
    app: str
    variant: str | None
    cls: str
    cc: str

    @property
    def group(self) -> tuple:
        return (self.app, self.variant, self.cls)


def table_rows(cells: list[tuple[CellKey, list[dict]]]) -> list[dict]:
    out = []
    for key, reps in cells:
        row = {"app": key.app, "variant": key.variant, "class": key.cls, "cc": key.cc,
               "repetitions": len(reps), "transfers": sum(r["n"] for r in reps),
               "failed": sum(r["n_failed"] for r in reps),
               "corrupt": sum(r.get("n_corrupt", 0) for r in reps)}
        for m in METRICS:
            row[m], row[f"{m}_ci95"] = mean_ci(r[m] for r in reps)
        out.append(row)
    return out


def compare(cells: list[tuple[CellKey, list[dict]]]) -> list[dict]:
    """Per application × class: the protocol with the lowest mean T_mean against each
    other one, Welch's t-test on the per-repetition T_mean; "better" only if p < 0.05."""
    groups: dict[tuple, list[tuple[str, list[float]]]] = {}
    for key, reps in cells:
        t = [r["t_mean"] for r in reps if r["t_mean"] is not None]
        groups.setdefault(key.group, []).append((key.cc, t))
    out = []
    for (app, variant, cls), entries in groups.items():
        entries = [e for e in entries if e[1]]
        if len(entries) < 2:
            continue
        entries.sort(key=lambda e: float(np.mean(e[1])))
        best, tb = entries[0]
        for other, to in entries[1:]:
            row = {"app": app, "variant": variant, "class": cls, "best": best, "other": other,
                   "t_best": float(np.mean(tb)), "t_other": float(np.mean(to)), "p": None}
            if len(tb) < 2 or len(to) < 2:
                row["verdict"] = "not tested (fewer than 2 repetitions)"
            else:
                p = _welch_p(tb, to)
                row["p"] = p
                row["verdict"] = (f"{best} faster than {other}" if p is not None and p < ALPHA
                                  else "no significant difference")
            out.append(row)
    return out


def _welch_p(a: list[float], b: list[float]) -> float | None:
    if np.std(a) == 0 and np.std(b) == 0:
        return 0.0 if np.mean(a) != np.mean(b) else 1.0
    res = st.ttest_ind(a, b, equal_var=False)
    p = float(res.pvalue)
    return p if math.isfinite(p) else None
