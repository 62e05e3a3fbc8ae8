"""The results of `itb study profile transition` (INRIA RR-6874 §6.2), typed: every
measured step of every repetition, and per mechanism, RTT and height the cost of a low →
high step in seconds at the sender's level, with its settling time."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from itb.analysis.pursuit import FORMAT_VERSION, Spread
from itb.analysis.results import VersionedResults

# A transition during which the link emulator released a segment this late is not
# measured: lags of a few hundred µs are common on 2 cores and cost nothing measurable,
# the outliers of a few ms of deficit came with lags of 3 ms and more.
DISTURBED_LAG_US = 1000


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
