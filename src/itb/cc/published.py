"""What each algorithm does under random loss: the published response function
w = c / p^d (w: the average window in segments, i.e. the rate in MSS per RTT), the window
range where Linux's implementation follows that slope, and the multiplicative decrease β
as Linux applies it (the fraction of the window given up at a congestion event:
cwnd_after = (1 − β)·cwnd_before). ITB's eBPF algorithms behave as Linux's (the
differential test), so Linux's values are the ones to check against.

Where the slope holds, from ITB's TCP model running Linux's own code with Bernoulli loss
behind the study's path, one ACK per segment as the study's testbed (bpf/difftest,
`custom:` scripts; docs/cc.md has the figures):
Reno everywhere above a few segments; Scalable above its Reno region (100 segments);
HighSpeed from a few hundred segments (a(w) grows in whole segments, Appendix B); BIC
(Linux: at most 16 segments per RTT, a quarter of the way to W_max, 20 RTTs of smoothing
at W_max) only from several thousand segments, where the linear increase begins to
dominate each cycle (d about 0.55-0.65 at 5000-12000, 0.5 only at tens of thousands); there its c is about 9 (15.5 is the paper's, with 32 segments per RTT), which is
what its loss range is planned with.
"""

from __future__ import annotations

from dataclasses import dataclass

from itb.cc import highspeed

BIC_BETA = 1 - 819 / 1024  # Linux: ssthresh = cwnd * 819 / 1024 above 14 segments
BIC_LOW_WINDOW = 14


@dataclass(frozen=True)
class Published:
    c: float | None  # None: no closed-form response function (H-TCP, CUBIC, Vegas)
    d: float | None
    beta_text: str  # the decrease as Linux applies it, as the table writes it
    source: str
    # Window range (segments) a response-function sweep aims at, where Linux's
    # implementation follows the published slope (d_from and up), at this RTT and below
    # this rate (CPU of one emulated path).
    windows: tuple[float, float] = (30, 300)
    plan_as: str | None = None  # whose c, d to plan the loss range with, when c is None
    rtt_ms: float = 20.0
    max_rate_bps: float = 250e6
    d_from: float = 0.0  # the published d is checked only when every point is above this
    max_measure_s: float = 60.0  # longest measured span of a point: 40 loss intervals, or this
    plan_c: float | None = None  # c to plan the loss range with, where Linux's differs

    def window(self, p: float) -> float | None:
        return None if self.c is None or self.d is None else self.c / p**self.d

    def loss_for(self, w: float) -> float:
        c, d = self.planned()
        return (c / w) ** (1 / d)

    def planned(self) -> tuple[float, float]:
        """(c, d) the loss range is planned with: its own (plan_c when Linux's c differs),
        else those of `plan_as`."""
        if self.c is not None and self.d is not None:
            return self.plan_c or self.c, self.d
        other = PUBLISHED.get(self.plan_as or "")
        if other is None or other.c is None or other.d is None:
            raise ValueError(f"no response function to plan with (plan_as {self.plan_as!r})")
        return other.c, other.d


def highspeed_b(w: float) -> float:
    """RFC 3649's b(w), the continuous formula (Linux keeps it per table row)."""
    return 0.5 if w <= highspeed.LOW_WINDOW else highspeed.b_of(w)


def nominal_beta(
    cc: str, cwnd: float, rtt_min: float | None = None, rtt_max: float | None = None
) -> float | None:
    """The decrease Linux applies at window `cwnd` (segments)."""
    if cc in ("reno", "vegas"):
        return 0.5
    if cc == "bic":
        return 0.5 if cwnd <= BIC_LOW_WINDOW else BIC_BETA
    if cc == "scalable":
        return 0.125  # cwnd >> 3, at every window
    if cc == "highspeed":
        return highspeed.decrease(cwnd)  # the table row holding cwnd
    if cc == "cubic":
        return 0.3  # RFC 9438 β_cubic = 0.7
    if cc == "htcp":
        # 1 − RTT_min/RTT_max in [0.2, 0.5]; Linux backs off by 1/2 instead after the
        # first event, below 10 ms RTT_min and when throughput moved > 20 % (its
        # bandwidth switch), which tcp_info does not show
        if not rtt_min or not rtt_max:
            return None
        return 1 - min(max(rtt_min / rtt_max, 0.5), 0.8)
    return None


def switch_beta(cc: str) -> float | None:
    """H-TCP's other decrease: 1/2 at the first congestion event and whenever its bandwidth
    switch fires (the throughput achieved between the last two events differs by more than
    20 %, which under random loss it mostly does); tcp_info does not show which rule ran, so
    an event is compared with the nearer. None for the others: they have one rule."""
    return 0.5 if cc == "htcp" else None


PUBLISHED: dict[str, Published] = {
    "reno": Published(1.22, 0.5, "1/2", "Mathis et al., CCR 1997; RFC 3649 §5"),
    "bic": Published(
        15.5,
        0.5,
        "0.2 (819/1024); 1/2 at or below 14 segments",
        "Xu, Harfoush, Rhee, INFOCOM 2004 (c for S_max = 32; Linux uses 16)",
        windows=(5000, 12000),
        rtt_ms=200.0,
        max_rate_bps=1e9,
        d_from=5000,
        max_measure_s=300.0,
        plan_c=9.0,
    ),
    "highspeed": Published(
        0.12,
        0.835,
        "b(w) of the table row: 0.5 up to 38 segments → 0.1",
        "RFC 3649",
        windows=(800, 3300),
        rtt_ms=100.0,
        d_from=300,
        max_rate_bps=500e6,
        max_measure_s=180.0,
    ),
    "scalable": Published(0.08, 1.0, "1/8", "Kelly, CCR 2003", windows=(120, 431), d_from=100),
    "htcp": Published(
        None,
        None,
        "1 − RTT_min/RTT_max in [0.2, 0.5], or 1/2",
        "Leith, Shorten, PFLDnet 2004",
        windows=(45, 300),
        plan_as="highspeed",
    ),
    "cubic": Published(None, None, "0.3 (RFC 9438; 1/5 in the paper)", "RFC 9438", plan_as="reno"),
    "vegas": Published(
        None, None, "1/2 (Reno's, on loss)", "Brakmo, Peterson, JSAC 1995", plan_as="reno"
    ),
}
