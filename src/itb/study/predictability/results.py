"""The results of `itb study predictability`, typed (results.json, `format_version`
checked on reading): the points, the fits of T_mean against the realised congestion level
(linear; quadratic where the report fits one) with the ideal-TCP yardstick, and
synchronised against spaced starts.

Definitions follow INRIA RR-6256 §3: T_i the completion time of forward transfer i,
T_mean their mean, σ_T = sqrt(1/N Σ (T_i − T_mean)²) over the N transfers of one run,
CoV = σ_T / T_mean. A point's figures are means over its repetitions.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from itb.analysis.results import VersionedResults

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
