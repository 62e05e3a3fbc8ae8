"""The results of `itb study pacing-vs-tbf`, typed (results.json, `format_version` checked
on reading): per cell the flows' mean completion time T (per repetition the mean over its
flows), T over the fluid model's ideal, and Jain's index of the flows' throughputs, each
the mean over repetitions ± its 95 % Student-t half-width (none from one repetition); and
per point the token bucket against pacing (itb.analysis.compare: Fieller's interval at
the Bonferroni level over every point, ±2 % margin)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from itb.analysis.compare import Comparison
from itb.analysis.results import VersionedResults

FORMAT_VERSION = 2  # 2: comparisons by Hsu and Holm


class Cell(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    cc: str
    rtt_ms: float
    buffer_bytes: int
    pattern: str
    mechanism: str
    ideal_s: float
    repetitions: int  # that completed every flow
    failed: int  # failed transfers (counted, not in T)
    t_runs: list[float]  # per repetition, the mean completion time of its flows
    t_mean: float | None
    t_mean_ci95: float | None
    slowdown: float | None  # T / ideal
    slowdown_ci95: float | None
    jain: float | None  # of the flows' throughputs (None: one flow)
    jain_ci95: float | None


class Penalty(BaseModel):
    """The token bucket against pacing at one point: difference = T_tbf / T_pacing − 1."""

    model_config = ConfigDict(frozen=True)
    cc: str
    rtt_ms: float
    buffer_bytes: int
    pattern: str
    comparison: Comparison


class Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    cells: list[Cell]
    penalties: list[Penalty]
