"""What a policy achieved on a workload (docs/service.md defines each, the paper's beside).

- admitted: requests given a plan (TS1 admits all); refused the others.
- misses: admitted requests whose plan ends after their deadline (only TS1's fluid plans
  can; measured runs count their own).
- lateness = t_f − dt per admitted request (negative: early); its p50 and p99.
- f1 = max over admitted of t_f − t_s: the longest transfer (the paper minimises it).
- makespan = max t_f − min t_s over the admitted.
- f2 = bytes delivered / (B_in · makespan), time-weighted: the share of the access link
  the admitted transfers used over their span. The paper's f2, Σ scheduled-rate / B_in,
  is 1 for both TS1 and TS2 in its example, a sum of rates that does not say how long
  they last; this one does.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from itb.service.greedy import Outcome
from itb.service.model import TOLERANCE, Request


class PolicyMetrics(BaseModel):
    policy: str
    requests: int
    admitted: int
    admission_ratio: float
    misses: int
    lateness_p50_s: float | None
    lateness_p99_s: float | None
    f1_s: float | None
    makespan_s: float | None
    f2: float | None
    planning_s: float


def measure(out: Outcome, requests: list[Request], b_in: float) -> PolicyMetrics:
    by_id = {r.id: r for r in requests}
    plans = list(out.plans.values())
    late = np.array([p.finish - by_id[p.request_id].deadline_s for p in plans])
    window = np.array(
        [by_id[p.request_id].deadline_s - by_id[p.request_id].release_s for p in plans]
    )
    misses = int((late > TOLERANCE * np.maximum(1.0, window)).sum()) if plans else 0
    span = (max(p.finish for p in plans) - min(p.start for p in plans)) if plans else None
    delivered = sum(by_id[p.request_id].bits for p in plans)
    return PolicyMetrics(
        policy=out.policy,
        requests=len(requests),
        admitted=len(plans),
        admission_ratio=len(plans) / len(requests) if requests else 0.0,
        misses=misses,
        lateness_p50_s=float(np.percentile(late, 50)) if plans else None,
        lateness_p99_s=float(np.percentile(late, 99)) if plans else None,
        f1_s=max(p.finish - p.start for p in plans) if plans else None,
        makespan_s=span,
        f2=delivered / (b_in * span) if span else None,
        planning_s=out.planning_s,
    )
