"""The results of `itb study friendliness`, typed (results.json, `format_version` checked
on reading). Inter-protocol fairness ("TCP-friendliness") measured by completion times, as the
benchmark report asks (INRIA RR-6244 §4.2.3: "the completion time of a TCP workload
will be measured to evaluate the fairness"): a bottleneck shared by a group of sources
running the tested congestion control and a group running a reference TCP.

Per repetition and group: T_group = mean completion time of the group's completed
forward transfers. The ratio T_reference / T_tested > 1 means the tested protocol took
more than its share; the reference group's T next to the tested one, against its T when
every source runs the reference, says what the tested protocol costs a TCP workload.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from itb.analysis.compare import Comparison
from itb.analysis.results import VersionedResults

FORMAT_VERSION = 3  # 2: the cost to the reference by Fieller, Bonferroni; 3: Hsu, Holm


class GroupRun(BaseModel):
    """One group of sources in one repetition."""

    model_config = ConfigDict(frozen=True)
    repetition: int
    cc: str
    sources: int
    completed: int
    failed: int  # failed or corrupt transfers: counted, not dropped
    t_mean: float | None  # over the completed ones


class Group(BaseModel):
    """One group over the repetitions of a point: the mean of the repetitions' T_group
    with its 95 % Student-t interval (none from one repetition)."""

    model_config = ConfigDict(frozen=True)
    cc: str
    sources: int
    repetitions: int
    completed: int
    failed: int
    t_mean: float | None
    t_mean_ci95: float | None


class Point(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    tested: str
    reference: str
    c_g: float
    c_g_realised: float
    tested_group: Group
    reference_group: Group
    reference_alone: Group | None  # every source the reference, same C_g
    ratio: float | None  # mean over repetitions of T_reference / T_tested
    ratio_ci95: float | None
    ratio_runs: int  # repetitions where both groups completed something
    reference_cost: Comparison | None  # reference next to tested vs reference alone


class Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    points: list[Point]
