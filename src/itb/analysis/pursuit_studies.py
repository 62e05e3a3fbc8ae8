"""The results of the profile-pursuit studies (INRIA RR-6874 §5.3, §6), typed:

- margin: one transfer along a constant profile asking for (1 − m)·C at the bottleneck,
  its lateness against the model's prediction, per margin m;
- pair: two complementary step profiles sharing the bottleneck at (1 − m)·C in all,
  each flow's lateness, per margin and pair of mechanisms;
- transition: the cost in seconds of a step from a low rate to a high one, per
  mechanism, RTT and height.

Lateness = measured completion − predicted completion (s; negative: early). A failed
transfer is counted (`n_failed`), not dropped; a spread of one value has no interval.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from itb.analysis.results import VersionedResults
from itb.analysis.statistics import mean_ci

FORMAT_VERSION = 1
LATENESS_LIMITS_S = (1.0, 0.5)  # the document's threshold, and a stricter one
# the two complementary profiles' steps, shares of (1 − m)·C (RR-6874 fig. 3)
PAIR_SHARES = {"A": (0.25, 0.75, 0.5), "B": (0.75, 0.25, 0.5)}
# A transition during which the link emulator released a segment this late is not
# measured: lags of a few hundred µs are common on 2 cores and cost nothing measurable,
# the outliers of a few ms of deficit came with lags of 3 ms and more.
DISTURBED_LAG_US = 1000


class Spread(BaseModel):
    """Values over repetitions: mean with its 95 % Student-t half-width (None from one
    value), extremes, and the failures that gave no value."""

    n: int
    n_failed: int = 0
    mean: float | None = None
    ci95: float | None = None
    min: float | None = None
    max: float | None = None
    values: list[float] = []

    @property
    def upper(self) -> float | None:
        """The upper end of the 95 % interval; the value itself when there is one."""
        if self.mean is None:
            return None
        return self.mean + (self.ci95 or 0.0)


def spread(values: Iterable[float | None], failed: int = 0) -> Spread:
    vals = [float(v) for v in values if v is not None and np.isfinite(v)]
    mean, half = mean_ci(vals)
    return Spread(n=len(vals), n_failed=failed, mean=mean, ci95=half,
                  min=min(vals) if vals else None, max=max(vals) if vals else None, values=vals)


class Burst(BaseModel):
    """The wire rate at the bottleneck while a flow (or the pair) sent: the mean, the
    largest 1 ms rate, and their ratio (the overshoot RR-6874 §5.1 blames UDT for)."""

    mean_bps: float | None
    max_1ms_bps: float | None
    drops: int  # segments the bottleneck's queue dropped meanwhile

    @property
    def overshoot(self) -> float | None:
        if not self.mean_bps or self.max_1ms_bps is None:
            return None
        return self.max_1ms_bps / self.mean_bps


def burst_of(rows, lo_ns: float, hi_ns: float) -> Burst:
    """Burst over the log rows (one link, direction, repetition) starting in [lo, hi)."""
    t = rows["t_ns"].to_numpy(dtype=float)
    sel = (t >= lo_ns) & (t < hi_ns)
    dt = rows["interval_s"].to_numpy(dtype=float)[sel]
    bits = rows["bytes"].to_numpy(dtype=float)[sel] * 8
    drops = int(rows["drops_queue"].to_numpy()[sel].sum()) if "drops_queue" in rows else 0
    if dt.sum() <= 0:
        return Burst(mean_bps=None, max_1ms_bps=None, drops=drops)
    return Burst(mean_bps=float(bits.sum() / dt.sum()), max_1ms_bps=float((bits / dt).max()),
                 drops=drops)


def pooled_burst(bursts: Sequence[Burst]) -> Burst:
    """Over repetitions: the mean of the means, the largest 1 ms rate, all drops."""
    means = [b.mean_bps for b in bursts if b.mean_bps is not None]
    peaks = [b.max_1ms_bps for b in bursts if b.max_1ms_bps is not None]
    return Burst(mean_bps=float(np.mean(means)) if means else None,
                 max_1ms_bps=max(peaks) if peaks else None, drops=sum(b.drops for b in bursts))


def margin_needed(points: Sequence[tuple[float, Spread]], limit_s: float) -> float | None:
    """The smallest margin from which on every point's lateness lies below `limit_s`
    (the upper end of its 95 % interval; the value itself from one repetition), every
    run completed; None when even the largest margin does not."""
    needed = None
    for m, s in sorted(points, key=lambda p: p[0], reverse=True):
        if s.n_failed or s.upper is None or s.upper >= limit_s:
            break
        needed = m
    return needed


# --- margin: one constant profile ----------------------------------------------------


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


# --- pair: two complementary step profiles ---------------------------------------------


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


# --- transition: low → high steps ------------------------------------------------------


class TransitionRun(BaseModel):
    """One measured transition of one repetition."""

    mechanism: str
    rtt_ms: float
    repetition: int
    low_bps: float
    high_bps: float
    ok: bool = True  # the transfer completed
    level_bps: float | None  # the wire rate the cost is measured against
    cost_s: float | None
    settled_s: float | None  # when the deficit reached 90 % of its peak, after the step
    window_s: float  # the span after the step's date the cost is taken over
    emulator_lag_us: int = 0  # the emulator's largest release lag in that span

    @property
    def disturbed(self) -> bool:
        """The emulator released a segment more than DISTURBED_LAG_US late meanwhile (it
        was short of CPU): the deficit is the testbed's, not the sender's. Left out of
        the spreads, counted there as failed."""
        return self.emulator_lag_us > DISTURBED_LAG_US


class TransitionPoint(BaseModel):
    mechanism: str
    rtt_ms: float
    low_bps: float
    high_bps: float
    failed: int = 0  # transfers that failed, or gave no level or cost
    disturbed: int = 0  # steps the emulator's lag disturbed
    cost: Spread  # n_failed: both
    settled: Spread


class TransitionResults(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    WHAT: ClassVar[str] = "profile transition study results"
    DESCRIPTION: ClassVar[str] = "profile transition study results"
    capacity_bps: int
    open_window: bool
    hold_s: float
    level_from: str  # how the level was taken, per protocol
    window: str  # how long after the step it is measured
    points: list[TransitionPoint]
    runs: list[TransitionRun]
    failed: int  # transfers that did not complete (their transitions are still measured)


# --- stage 0: the hosts are not the bottleneck -----------------------------------------


class CpuPoint(BaseModel):
    """CPU of the endpoints at one input rate, in % of one core over the transfer."""

    mechanism: str
    rtt_ms: float
    input_bps: float
    send_cpu_pct: Spread
    recv_cpu_pct: Spread
    goodput_bps: Spread


class RatePoint(BaseModel):
    """The goodput of one way of transferring at full speed."""

    part: str  # "files" or "streams"
    label: str  # m2m / d2m / d2d, "GridFTP -p N", "itb-udt"
    mechanism: str
    streams: int
    goodput_bps: Spread


class Stage0Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    WHAT: ClassVar[str] = "profile stage 0 results"
    DESCRIPTION: ClassVar[str] = "profile stage 0 results"
    capacity_bps: int
    volume: int
    cpu: list[CpuPoint]
    files: list[RatePoint]
    streams: list[RatePoint]
