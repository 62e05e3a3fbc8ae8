"""The results of `itb study response-function`, typed (results.json, `format_version`
checked on reading); the fit on them is `fit`'s.

A point is one flow at one loss rate: its steady-state goodput after a warm-up as a
window w = R·RTT/MSS (the rate in MSS per RTT), the loss the emulator applied over the
same span, and its congestion events. Per algorithm, the fit log w = log c − d·log p
over the points the loss (not the link) limited, compared with the published c and d,
and the median decrease β = 1 − cwnd_after / cwnd_before against the one Linux applies
(itb.cc.published).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from itb.analysis.results import VersionedResults

FORMAT_VERSION = 1
D_TOLERANCE = 0.08  # the acceptance band of the fitted exponent d
BETA_TOLERANCE = 0.03  # ... and of the measured decrease β


class Point(BaseModel):
    """One repetition of one point. The fields after `window` are None when the
    repetition did not run or left no sender log to measure."""

    model_config = ConfigDict(frozen=True)
    name: str
    cc: str
    p: float  # configured loss rate of the data direction
    plan_window: float  # segments the published (or planning) response function gives
    warmup_s: float  # s before the measured span
    # ms: the flow's mean smoothed RTT over the measured span once measured (None when
    # the steady state was too short); the configured RTT when the repetition did not run
    rtt_ms: float | None
    rate_bps: int  # bit/s: the bottleneck
    repetition: int
    # "ok", "too short", "no loss", "corrupt window", or the repetition's own status
    # ("not run", "failed", ...) when it left nothing to measure
    status: str
    window: float | None  # segments: goodput·RTT/MSS, the rate in MSS per RTT
    measured_s: float | None = None  # s: the measured span (0: too short)
    goodput_bps: float | None = None  # bit/s over the measured span
    mean_cwnd: float | None = None  # segments: tcp_info's cwnd averaged over the span
    loss_seen: float | None = None  # retransmitted / sent segments over the span
    p_link: float | None = None  # share of the data segments the link's loss model dropped
    lost: int | None = None  # segments the loss model dropped over the span
    queue_drops: int | None = None  # segments the full queue dropped over the span
    events: int | None = None  # congestion events after the warm-up
    beta: float | None = None  # median β of those events
    link_limited: bool | None = None  # queue drops, or goodput over 90 % of C: not fitted
    published_window: float | None = None  # segments: the published c/p^d at p_fit
    note: str | None = None  # why a repetition failed, or why its window is corrupt

    @property
    def p_fit(self) -> float:
        """The loss rate the point is fitted at: what the link applied, else p."""
        return self.p_link or self.p


class Event(BaseModel):
    """One fast-recovery episode after the warm-up (timeouts excluded)."""

    model_config = ConfigDict(frozen=True)
    cc: str
    p: float  # the point's configured loss rate
    t_s: float  # s since the sender log's first sample
    cwnd_before: float  # segments: last sample in Open/Disorder before Recovery
    cwnd_after: float  # segments: first sample back in Open/Disorder
    beta: float  # 1 − cwnd_after / cwnd_before
    nominal: float | None  # Linux's decrease at cwnd_before (H-TCP: its RTT rule; None
    #                        without RTT samples)
    nominal_switch: float | None = None  # H-TCP's bandwidth switch: 1/2; None for others

    @property
    def nearer_nominal(self) -> float:
        """The decrease Linux applies at this event: its rule's value, or for H-TCP the
        nearer of its RTT-ratio rule and the 1/2 its bandwidth switch applies."""
        options = [n for n in (self.nominal, self.nominal_switch) if n is not None]
        return min(options, key=lambda n: abs(self.beta - n))


class Fit(BaseModel):
    """One algorithm: log w = log c − d·log p over its fitted points, and its decreases."""

    model_config = ConfigDict(frozen=True)
    cc: str
    n: int  # points fitted: status ok, a window, not link-limited
    c_published: float | None  # None: no closed form (H-TCP, CUBIC, Vegas)
    d_published: float | None
    beta_published: str  # the decrease as the table writes it
    source: str  # the publication
    d_from: float  # segments: d is judged only when the median window is at or above
    c: float | None = None  # segments at p = 1 (None under 3 points)
    d: float | None = None
    d_ci95: float | None = None  # half-width of d's 95 % Student-t interval
    r2: float | None = None
    d_ok: bool | None = None  # |d − d_published| ≤ D_TOLERANCE; None: not judged
    w_min: float | None = None  # segments: the fitted points' smallest window
    w_max: float | None = None
    rtt_ms: float | None = None  # ms: the first fitted point's measured RTT
    events: int = 0  # congestion events with a nominal β
    beta: float | None = None  # median measured β
    beta_nominal: float | None = None  # median of Linux's β at those events
    beta_error: float | None = None  # median of β − Linux's β, event by event
    beta_ok: bool | None = None  # |beta_error| ≤ BETA_TOLERANCE
    switch_share: float | None = None  # H-TCP: share of events nearer its switch's 1/2


class Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    points: list[Point]
    fits: list[Fit]
    events: list[Event]
