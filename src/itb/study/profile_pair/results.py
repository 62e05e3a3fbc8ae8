"""The results of `itb study profile pair` (INRIA RR-6874 §6.1), typed: two complementary
step profiles sharing the bottleneck at (1 − m)·C in all, each flow's lateness per margin
and pair of mechanisms, and the margin each lateness limit needs."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from itb.analysis.pursuit import FORMAT_VERSION, Burst, Spread
from itb.analysis.results import VersionedResults

# the two complementary profiles' steps, shares of (1 − m)·C (RR-6874 fig. 3)
PAIR_SHARES = {"A": (0.25, 0.75, 0.5), "B": (0.75, 0.25, 0.5)}


class PairFlow(BaseModel):
    flow: str  # "A" (low, high, mid) or "B" (high, low, mid)
    mechanism: str
    input_steps: list[tuple[int, int]]  # (µs, bit/s) asked
    volume: int
    predicted_s: float
    lateness: Spread


class PairPoint(BaseModel):
    combo: str  # e.g. "nocc-pacing+udt"
    margin: float
    rtt_ms: float
    flows: list[PairFlow]
    burst: Burst  # the pair together at the bottleneck


class PairThreshold(BaseModel):
    combo: str
    flow: str
    mechanism: str
    limit_s: float
    margin: float | None


class PairResults(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    WHAT: ClassVar[str] = "profile pair study results"
    DESCRIPTION: ClassVar[str] = "profile pair study results"
    capacity_bps: int
    seconds: float
    open_window: bool
    points: list[PairPoint]
    thresholds: list[PairThreshold]
