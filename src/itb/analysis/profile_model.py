"""The profile-pursuit model (Guillier, Soudan, Primet, INRIA RR-6874, 2009, §3.3 and
§5.2): what a sender asked for an input rate X delivers, as two lines per RTT,

    goodput(X, RTT)    = a_g(RTT)·X + b_g(RTT)     (file bytes over the transfer's time)
    throughput(X, RTT) = a_t(RTT)·X + b_t(RTT)     (mean rate on the wire, the bottleneck)

fitted over the linear part of a sweep of X, then each coefficient as a line in RTT.
Inverted, it gives the input for a wanted throughput (eq. 3), the goodput that goes with
a throughput (eq. 6), and so the completion time of a volume sent along a throughput
profile.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from itb.analysis.results import VersionedResults
from itb.scenario.experiment import profile as profiles


class Sample(BaseModel):
    """One calibration transfer: its input rate and what it achieved."""

    rtt_ms: float
    input_bps: float
    goodput_bps: float  # volume × 8 / completion time
    throughput_bps: float  # mean wire rate at the bottleneck while it sent
    throughput_max_bps: float  # largest 1 ms wire rate at the bottleneck


class Line(BaseModel):
    """y = a·x + b by least squares; r the correlation of x and y (None from two points
    or constant data: a line through them explains them exactly, which measures nothing)."""

    a: float
    b: float
    r: float | None
    n: int
    x_lo: float
    x_hi: float

    def at(self, x: float) -> float:
        return self.a * x + self.b


def fit_line(x: Sequence[float], y: Sequence[float]) -> Line:
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.size != ya.size or np.unique(xa).size < 2:
        raise ValueError(f"a line needs at least two distinct x values (got {np.unique(xa).size})")
    a, b = np.polyfit(xa, ya, 1)
    r = None
    if xa.size > 2 and ya.std() > 0:
        r = float(np.corrcoef(xa, ya)[0, 1])
    return Line(
        a=float(a), b=float(b), r=r, n=int(xa.size), x_lo=float(xa.min()), x_hi=float(xa.max())
    )


class PerRtt(BaseModel):
    rtt_ms: float
    goodput: Line
    throughput: Line


class Model(VersionedResults):
    """The fitted model of one mechanism (e.g. nocc + pacing) on one testbed."""

    FORMAT = 1
    KIND = "model"
    WHAT = "profile model"
    DESCRIPTION = "a profile model"

    mechanism: str
    linear_max_bps: float  # inputs above this were left out of the fits
    # calibrated with receivers' windows open from the first ACK (None: not recorded)
    open_receive_window: bool | None = None
    per_rtt: list[PerRtt]
    # each coefficient against RTT (ms); from one RTT they are constants
    a_g: Line
    b_g: Line
    a_t: Line
    b_t: Line

    def coefficients(self, rtt_ms: float) -> tuple[float, float, float, float]:
        return (self.a_g.at(rtt_ms), self.b_g.at(rtt_ms), self.a_t.at(rtt_ms), self.b_t.at(rtt_ms))

    def input_for_throughput(self, throughput_bps: float, rtt_ms: float) -> float:
        """Eq. 3: the input that gives this mean throughput."""
        _ag, _bg, at, bt = self.coefficients(rtt_ms)
        return (throughput_bps - bt) / at

    def goodput_for_throughput(self, throughput_bps: float, rtt_ms: float) -> float:
        """Eq. 6: the goodput that goes with this throughput."""
        ag, bg, at, bt = self.coefficients(rtt_ms)
        return ag / at * (throughput_bps - bt) + bg

    def input_profile(
        self, throughput_steps: Sequence[tuple[int, int]], rtt_ms: float
    ) -> tuple[profiles.Step, ...]:
        """The input profile that makes the wanted throughput profile (µs, bit/s steps)."""
        return tuple(
            (t, max(1, round(self.input_for_throughput(r, rtt_ms)))) for t, r in throughput_steps
        )

    def completion_s(
        self, throughput_steps: Sequence[tuple[int, int]], volume: int, rtt_ms: float
    ) -> float:
        """Predicted completion time of `volume` bytes sent along a throughput profile:
        each step's goodput from eq. 6, then the date by which they add up to it."""
        good = tuple(
            (t, max(1, round(self.goodput_for_throughput(r, rtt_ms)))) for t, r in throughput_steps
        )
        return profiles.time_to_send_us(good, volume) / 1e6


def fit(samples: Sequence[Sample], mechanism: str, linear_max_bps: float) -> Model:
    """Per RTT, both lines over the samples with input ≤ linear_max_bps; then each
    coefficient against RTT (a constant when only one RTT was swept)."""
    by_rtt: dict[float, list[Sample]] = {}
    for s in samples:
        if s.input_bps <= linear_max_bps:
            by_rtt.setdefault(s.rtt_ms, []).append(s)
    if not by_rtt:
        raise ValueError(f"no sample with an input at most {linear_max_bps:g} bit/s")
    per = []
    for rtt, pts in sorted(by_rtt.items()):
        x = [p.input_bps for p in pts]
        per.append(
            PerRtt(
                rtt_ms=rtt,
                goodput=fit_line(x, [p.goodput_bps for p in pts]),
                throughput=fit_line(x, [p.throughput_bps for p in pts]),
            )
        )
    rtts = [p.rtt_ms for p in per]

    def against_rtt(values: list[float]) -> Line:
        if len(rtts) == 1:
            return Line(a=0.0, b=values[0], r=None, n=1, x_lo=rtts[0], x_hi=rtts[0])
        return fit_line(rtts, values)

    return Model(
        mechanism=mechanism,
        linear_max_bps=linear_max_bps,
        per_rtt=per,
        a_g=against_rtt([p.goodput.a for p in per]),
        b_g=against_rtt([p.goodput.b for p in per]),
        a_t=against_rtt([p.throughput.a for p in per]),
        b_t=against_rtt([p.throughput.b for p in per]),
    )
