"""The analysis of `itb study predictability` (INRIA RR-6256 §3): per point the
repetitions' completion statistics, the margins over T_mean and what the ideal protocol
gives on its plan; T_mean = a·C_g + b fitted per protocol and reverse level against the
realised C_g (quadratic for Scalable, as the report does), and σ_T synchronised against
spaced."""

from __future__ import annotations

import statistics
import tomllib

import pandas as pd

from itb.analysis.cells import forward_completions
from itb.analysis.regression import fit_poly
from itb.analysis.statistics import fit_linear, margins
from itb.study.predictability.args import PredictabilityArgs
from itb.study.predictability.cells import PredictabilityCell
from itb.study.predictability.plan import planned_ideal
from itb.study.predictability.results import QUADRATIC, Fit, Point, Results, Spacing
from itb.suite import stats
from itb.sweep.sweep import Sweep


def _point(sweep: Sweep[PredictabilityCell], c: PredictabilityCell) -> Point:
    m = sweep.metrics(c)
    reps = stats.per_repetition(m) if m is not None else []
    row: dict = {
        "name": c.name,
        "cc": c.cc,
        "c_g": c.c_g,
        "reverse": c.reverse,
        "r_level": c.r_level,
        "spacing_s": c.spacing_s,
        "spacing_realised_s": c.spacing_realised_s,
        "c_g_realised": c.c_g_realised,
    }
    with open(sweep.out / c.scenario, "rb") as f:  # the plan that ran
        ideal = planned_ideal(tomllib.load(f))
    row["ideal_t_mean_s"], row["ideal_sigma_t_s"] = (
        statistics.fmean(ideal),
        statistics.pstdev(ideal),
    )
    row["repetitions"] = len(reps)
    row["failed"] = sum(r["n_failed"] for r in reps)
    for k in ("t_mean", "sigma_t", "cov", "t_min", "t_max"):
        row[k], row[f"{k}_ci95"] = stats.mean_ci(r[k] for r in reps)
    times = forward_completions(sweep.out, c)
    mg = margins(times) if times else None
    row["transfers"] = len(times)
    row["margin68_s"] = mg and mg["m68_s"]
    row["margin95_s"] = mg and mg["m95_s"]
    return Point(**row)


def analyse(sweep: Sweep[PredictabilityCell], a: PredictabilityArgs) -> Results:
    points = [_point(sweep, c) for c in sweep.index.cells]
    res = Results(
        points=points,
        fits=fits_of(points, a.ccs, a.reverse, a.spacing_s, a.fit_range),
        spacing=spacing_of(points, a.ccs, a.sync_c_g, a.reverse[0], a.spacing_s),
    )
    pd.DataFrame([p.model_dump() for p in points]).to_csv(sweep.out / "points.csv", index=False)
    res.save(sweep.out / "results.json")
    return res


def _in(p: Point, lo: float, hi: float) -> bool:
    return lo - 1e-9 <= p.c_g_realised <= hi + 1e-9


def fits_of(
    points: list[Point],
    ccs: tuple[str, ...],
    reverse: tuple,
    spacing_s: float,
    fit_range: tuple[float, float],
) -> list[Fit]:
    """T_mean against the realised C_g over the fit range, per protocol and reverse level:
    the linear model for every protocol (with the ideal protocol's slope over the same
    points), and the quadratic one where the report fits it."""
    lo, hi = fit_range
    fits = []
    for cc in ccs:
        for rv in reverse:
            measured = [
                (p, t)
                for p in points
                if p.cc == cc
                and p.reverse == rv
                and p.spacing_s == spacing_s
                and (t := p.t_mean) is not None
                and _in(p, lo, hi)
            ]
            sel = [p for p, _ in measured]
            t_means = [t for _, t in measured]
            xs = [p.c_g_realised for p in sel]
            if len(set(xs)) < 2:
                continue
            lin = fit_linear(xs, t_means)
            ideal = fit_linear(xs, [p.ideal_t_mean_s for p in sel])["a"]
            # a line through two points explains them exactly: no correlation to claim
            r, r2 = (lin["r"], lin["r2"]) if len(set(xs)) > 2 else (None, None)
            fits.append(
                Fit(
                    cc=cc,
                    reverse=rv,
                    model="linear",
                    c_g_range=(lo, hi),
                    coef=[lin["a"], lin["b"]],
                    r=r,
                    r2=r2,
                    n=lin["n"],
                    ideal_slope=ideal,
                    slope_ratio=lin["a"] / ideal if ideal > 0 else None,
                )
            )
            if any(q in cc for q in QUADRATIC) and len(set(xs)) > 3:  # R² needs a spare point
                quad = fit_poly(xs, t_means, 2)
                fits.append(
                    Fit(
                        cc=cc,
                        reverse=rv,
                        model="quadratic",
                        c_g_range=(lo, hi),
                        coef=quad["coef"],
                        r2=quad["r2"],
                        n=quad["n"],
                    )
                )
    return fits


def spacing_of(
    points: list[Point], ccs: tuple[str, ...], c_g: float, reverse, spacing_s: float
) -> list[Spacing]:
    """σ_T with synchronised (0 s) against spaced starts at one congestion level."""
    if spacing_s == 0:
        return []
    out = []
    for cc in ccs:
        pair = {
            p.spacing_s: p for p in points if p.cc == cc and p.c_g == c_g and p.reverse == reverse
        }
        if 0.0 in pair and spacing_s in pair:
            s0, s1 = pair[0.0], pair[spacing_s]
            out.append(
                Spacing(
                    cc=cc,
                    c_g=c_g,
                    spacing_s=s1.spacing_realised_s,
                    sigma_t_sync=s0.sigma_t,
                    sigma_t_spaced=s1.sigma_t,
                    t_mean_sync=s0.t_mean,
                    t_mean_spaced=s1.t_mean,
                    ideal_sigma_t_spaced=s1.ideal_sigma_t_s,
                )
            )
    return out
