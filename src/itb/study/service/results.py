"""The results of `itb study service`, typed (results.json, `format_version` checked on
reading). Per cell, over its repetitions and requests (docs/service.md defines each):

- misses: transfers that ended after their request's deadline, or did not complete (TS1:
  also counted among the requests the planned policy admitted, the same requests);
- late_s: finish − deadline per transfer (negative: early), its p50 and p99;
- plan_late_s: finish − the plan's t_f (planned policies; TS1: the fluid model's);
- f1_s: the longest transfer (finish − start), makespan_s and f2 (bytes / (B_in · span)),
  the mean over repetitions;
- margin needed (TS1): per transfer 1 − fluid duration / measured duration (its share of
  the link it would have had to give up to be predicted), its p68 and p95, beside the
  6 % and 12 % INRIA RR-6256 found for 68 % and 95 %.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from itb.analysis.results import VersionedResults

FORMAT_VERSION = 1


class Cell(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    workload: str
    policy: str
    cc: str
    mechanism: str = "nocc-pacing"  # TS1: its congestion control
    requests: int
    admitted: int
    optimum: int | None
    planning_s: float
    repetitions: int  # that ended
    transfers: int  # over every repetition
    failed: int
    misses: int  # late or failed
    misses_of_planned: int | None  # TS1: of those, among the requests the planner admitted
    late_p50_s: float | None
    late_p99_s: float | None
    late_max_s: float | None
    plan_late_p50_s: float | None
    plan_late_p99_s: float | None
    f1_s: float | None
    makespan_s: float | None
    f2: float | None
    margin_p68: float | None
    margin_p95: float | None


class Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    cells: list[Cell]
