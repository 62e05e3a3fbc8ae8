"""The predictability study's results as typed models, and the computations on them:
fits of T_mean against the realised congestion level (linear; quadratic where the report
fits one), the ideal-TCP yardstick, and synchronised against spaced starts.

Definitions follow INRIA RR-6256 §3: T_i the completion time of forward transfer i,
T_mean their mean, σ_T = sqrt(1/N Σ (T_i − T_mean)²) over the N transfers of one run,
CoV = σ_T / T_mean. A point's figures are means over its repetitions.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from itb.analysis.regression import fit_poly
from itb.analysis.results import VersionedResults
from itb.analysis.statistics import fit_linear

FORMAT_VERSION = 2
# where the report fits a quadratic model (RR-6256 §4.2.2: Scalable, R² 0.996)
QUADRATIC = ("scalable",)


class Point(BaseModel):
    """One point of the sweep: a protocol at a congestion level, reverse level and spacing."""

    model_config = ConfigDict(frozen=True)
    name: str
    cc: str
    c_g: float  # nominal
    c_g_realised: float  # round(C_g·K)/K: the sources that actually run
    reverse: float | str
    r_level: float
    spacing_s: float  # asked for (0: synchronised)
    spacing_realised_s: float  # after the start-span cap
    repetitions: int = 0
    transfers: int = 0  # completed forward transfers, all repetitions
    failed: int = 0  # failed or corrupt forward transfers, all repetitions
    t_mean: float | None = None
    t_mean_ci95: float | None = None
    sigma_t: float | None = None
    sigma_t_ci95: float | None = None
    cov: float | None = None
    cov_ci95: float | None = None
    t_min: float | None = None
    t_min_ci95: float | None = None
    t_max: float | None = None
    t_max_ci95: float | None = None
    margin68_s: float | None = None
    margin95_s: float | None = None
    ideal_t_mean_s: float  # the ideal protocol on this point's plan (fluid fair share)
    ideal_sigma_t_s: float


class Fit(BaseModel):
    model_config = ConfigDict(frozen=True)
    cc: str
    reverse: float | str
    model: Literal["linear", "quadratic"]
    x: Literal["realised C_g"] = "realised C_g"
    c_g_range: tuple[float, float]
    coef: list[float]  # highest power first: linear (a, b), quadratic (a, b, c)
    r: float | None = None  # Pearson r (linear only)
    r2: float | None
    n: int
    ideal_slope: float | None = None  # slope of the ideal protocol over the same points
    slope_ratio: float | None = None  # a / ideal_slope (linear only)

    @property
    def a(self) -> float:
        return self.coef[0]

    @property
    def b(self) -> float:
        return self.coef[1]


class Spacing(BaseModel):
    model_config = ConfigDict(frozen=True)
    cc: str
    c_g: float
    spacing_s: float  # the spaced case as run (after the cap)
    sigma_t_sync: float | None
    sigma_t_spaced: float | None
    t_mean_sync: float | None
    t_mean_spaced: float | None
    ideal_sigma_t_spaced: float  # what the plan alone gives a perfectly fair protocol


class Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    points: list[Point]
    fits: list[Fit]
    spacing: list[Spacing]


def _in(p: Point, lo: float, hi: float) -> bool:
    return lo - 1e-9 <= p.c_g_realised <= hi + 1e-9


def fits_of(points: list[Point], ccs: tuple[str, ...], reverse: tuple, spacing_s: float,
            fit_range: tuple[float, float]) -> list[Fit]:
    """T_mean against the realised C_g over the fit range, per protocol and reverse level:
    the linear model for every protocol (with the ideal protocol's slope over the same
    points), and the quadratic one where the report fits it."""
    lo, hi = fit_range
    fits = []
    for cc in ccs:
        for rv in reverse:
            sel = [p for p in points if p.cc == cc and p.reverse == rv and p.spacing_s == spacing_s
                   and p.t_mean is not None and _in(p, lo, hi)]
            xs = [p.c_g_realised for p in sel]
            if len(set(xs)) < 2:
                continue
            lin = fit_linear(xs, [p.t_mean for p in sel])
            ideal = fit_linear(xs, [p.ideal_t_mean_s for p in sel])["a"]
            # a line through two points explains them exactly: no correlation to claim
            r, r2 = (lin["r"], lin["r2"]) if len(set(xs)) > 2 else (None, None)
            fits.append(Fit(cc=cc, reverse=rv, model="linear",
                            c_g_range=(lo, hi), coef=[lin["a"], lin["b"]], r=r, r2=r2, n=lin["n"],
                            ideal_slope=ideal,
                            slope_ratio=lin["a"] / ideal if ideal > 0 else None))
            if any(q in cc for q in QUADRATIC) and len(set(xs)) > 3:  # R² needs a spare point
                quad = fit_poly(xs, [p.t_mean for p in sel], 2)
                fits.append(Fit(cc=cc, reverse=rv, model="quadratic", c_g_range=(lo, hi),
                                coef=quad["coef"], r2=quad["r2"], n=quad["n"]))
    return fits


def spacing_of(points: list[Point], ccs: tuple[str, ...], c_g: float, reverse,
               spacing_s: float) -> list[Spacing]:
    """σ_T with synchronised (0 s) against spaced starts at one congestion level."""
    if spacing_s == 0:
        return []
    out = []
    for cc in ccs:
        pair = {p.spacing_s: p for p in points
                if p.cc == cc and p.c_g == c_g and p.reverse == reverse}
        if 0.0 in pair and spacing_s in pair:
            s0, s1 = pair[0.0], pair[spacing_s]
            out.append(Spacing(cc=cc, c_g=c_g, spacing_s=s1.spacing_realised_s,
                               sigma_t_sync=s0.sigma_t, sigma_t_spaced=s1.sigma_t,
                               t_mean_sync=s0.t_mean, t_mean_spaced=s1.t_mean,
                               ideal_sigma_t_spaced=s1.ideal_sigma_t_s))
    return out
