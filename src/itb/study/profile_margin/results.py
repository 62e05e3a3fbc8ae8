"""The results of `itb study profile margin` (INRIA RR-6874 §5.3), typed: one transfer
along a constant profile asking for (1 − m)·C at the bottleneck, its lateness against the
model's prediction per margin m, and the margin each lateness limit needs."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from itb.analysis.pursuit import FORMAT_VERSION, Burst, Spread
from itb.analysis.results import VersionedResults


class MarginPoint(BaseModel):
    rtt_ms: float
    margin: float  # share of C left unused
    target_bps: float  # the throughput asked at the bottleneck, (1 − m)·C
    input_bps: float  # what the sender was asked (the model's eq. 3)
    volume: int
    predicted_s: float  # the model's completion time (eq. 6)
    lateness: Spread
    burst: Burst


class MarginThreshold(BaseModel):
    rtt_ms: float
    limit_s: float
    margin: float | None


class MarginResults(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    WHAT: ClassVar[str] = "profile margin study results"
    DESCRIPTION: ClassVar[str] = "profile margin study results"
    mechanism: str
    capacity_bps: int
    seconds: float
    open_window: bool
    points: list[MarginPoint]
    thresholds: list[MarginThreshold]
