"""A cell of `itb study service` as its sweep's index keeps it: the workload, the policy
and congestion control, and every request with what the planner promised it."""

from __future__ import annotations

from pydantic import BaseModel

from itb.sweep.index import IndexCell


class PlannedRequest(BaseModel):
    id: str
    volume_bytes: int
    release_s: float
    deadline_s: float
    max_rate_bps: float
    admitted: bool
    start_s: float | None = None  # the plan's t_s (TS1: the release)
    finish_s: float | None = None  # the plan's t_f (TS1: the fluid model's)


class ServiceCell(IndexCell):
    workload: str
    policy: str
    cc: str
    mechanism: str = "nocc-pacing"  # planned policies' (TS1: its congestion control alone)
    b_in_bps: float  # the access link's payload capacity
    lead_s: float  # workload date 0 in the repetition
    planning_s: float
    optimum: int | None  # the largest admissible set, when HiGHS proved it
    requests: list[PlannedRequest]
