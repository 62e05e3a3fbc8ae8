"""The results of `itb study multiplexing`, typed (results.json, `format_version` checked
on reading): per cell the forward transfers' mean and latest completion time, the CoV of
the bottleneck's aggregate forward throughput in 1 s bins while they run, and each K
against the first by Fieller's interval on the latest completion time (Holm's steps over
the study), each figure the mean over repetitions ± its 95 % Student-t half-width (none
from one repetition)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from itb.analysis.compare import Comparison
from itb.analysis.results import VersionedResults

FORMAT_VERSION = 2  # 2: comparisons by Hsu and Holm


class Point(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    cc: str
    k: int
    forward_sources: int
    reverse_sources: int
    repetitions: int  # that completed every forward transfer
    failed: int  # failed forward transfers
    t_mean: float | None
    t_mean_ci95: float | None
    t_max_runs: list[float]  # per repetition, the latest completion time
    t_max: float | None
    t_max_ci95: float | None
    swing: float | None  # CoV of the 1 s aggregate forward throughput
    swing_ci95: float | None
    against_first: Comparison | None  # T_max against the first K's (None for the first)


class Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    points: list[Point]
