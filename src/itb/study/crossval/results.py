"""The results of `itb study crossval`, typed (results.json, `format_version` checked on
reading): per cell its measures over the repetitions that ended ok (mean and 95 %
interval), and per (scenario, congestion control, measure) the emulated and simulated
values side by side with the verdict (docs/simulation.md: the bounds)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from itb.analysis.results import VersionedResults

FORMAT_VERSION = 1


class Measure(BaseModel):
    model_config = ConfigDict(frozen=True)
    mean: float | None
    ci95: float | None  # half-width of the 95 % interval (None: fewer than 2 values)
    n: int
    values: list[float]


class CellResult(BaseModel):
    name: str
    scenario: str
    cc: str
    backend: str
    repetitions: int  # that ended ok
    failed: int
    disturbed: int = 0  # ended ok, left out: the hypervisor stole ≥ 5 % of the CPU time
    load: float | None = None  # C_g = sources · C_a / C (None: the access links unlimited)
    measures: dict[str, Measure]  # goodput_bps, t_mean_s, cov, jain, first_loss_s, …


class Comparison(BaseModel):
    scenario: str
    cc: str
    measure: str
    emulated: Measure
    simulated: Measure
    difference: float | None  # relative (sim / emu − 1), or absolute for Jain, ratio for CoV
    how: str  # "relative", "absolute", "ratio"
    bound: str  # the acceptance bound, as text
    within: bool | None  # the verdict: agrees (None: a side has no value, or shown only)
    overlap: bool | None  # shown: what `overlap_test` says (None: a side has no interval)
    cause: str | None = None  # for a disagreement: its likely cause
    overlap_test: str | None = None  # what `overlap` tests for these two sides
    test: str | None = None  # the interval test behind the verdict, beyond the bound
    interval: tuple[float, float] | None = None  # its 90 % interval of (sim − emu) / emu
    untested: str | None = None  # what could not be tested, and why (judged on the means)
    undecided: bool = False  # the means within the bound, the interval not: not "differs"


class Ranking(BaseModel):
    scenario: str
    emulated: list[str]  # congestion controls, fastest first
    simulated: list[str]
    decided: bool  # emulation's order is not within its intervals' noise
    same: bool


class Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    capacity_bps: int
    rtt_ms: float
    cells: list[CellResult]
    comparisons: list[Comparison]
    rankings: list[Ranking]
