"""What the publications say each algorithm does under random loss (SPEC §4.5): the
response function w = c / p^d (w: the average window in segments, i.e. the rate in
MSS per RTT) and the multiplicative decrease β (the fraction of the window given up
at a congestion event: cwnd_after = (1 − β)·cwnd_before)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    c: float | None      # None: no closed-form response function (H-TCP, CUBIC, Vegas)
    d: float | None
    beta_text: str       # the nominal decrease, as the table writes it
    source: str
    # Window range (segments) a response-function sweep aims at: above the variant's
    # low-window regime, below where one emulated path runs out of CPU.
    windows: tuple[float, float] = (30, 300)
    plan_as: str | None = None  # whose c, d to plan the loss range with, when c is None

    def window(self, p: float) -> float | None:
        return None if self.c is None else self.c / p ** self.d

    def loss_for(self, w: float) -> float:
        c, d = (self.c, self.d) if self.c is not None else \
            (PUBLISHED[self.plan_as].c, PUBLISHED[self.plan_as].d)
        return (c / w) ** (1 / d)


# RFC 3649's HighSpeed decrease b(w) (section 5): 0.5 at Low_Window = 38 falling
# log-linearly to 0.1 at High_Window = 83000.
HS_LOW_WINDOW, HS_HIGH_WINDOW, HS_HIGH_DECREASE = 38, 83000, 0.1


def highspeed_b(w: float) -> float:
    if w <= HS_LOW_WINDOW:
        return 0.5
    span = math.log(HS_HIGH_WINDOW) - math.log(HS_LOW_WINDOW)
    return (HS_HIGH_DECREASE - 0.5) * (math.log(w) - math.log(HS_LOW_WINDOW)) / span + 0.5


def nominal_beta(cc: str, cwnd: float, rtt_min: float | None = None,
                 rtt_max: float | None = None) -> float | None:
    """The decrease the publication prescribes at window `cwnd` (segments)."""
    if cc in ("reno", "vegas"):
        return 0.5
    if cc == "bic":
        return 0.5 if cwnd < 14 else 0.125     # BIC's low_window: standard TCP below
    if cc == "scalable":
        return 0.5 if cwnd < 16 else 0.125     # Scalable's legacy window
    if cc == "highspeed":
        return highspeed_b(cwnd)
    if cc == "cubic":
        return 0.3                             # RFC 9438 β_cubic = 0.7
    if cc == "htcp":
        if not rtt_min or not rtt_max:
            return None
        return 1 - min(max(rtt_min / rtt_max, 0.5), 0.8)  # adaptive backoff
    return None


PUBLISHED: dict[str, Published] = {
    "reno": Published(1.22, 0.5, "1/2", "Mathis et al., CCR 1997; RFC 3649 §5"),
    "bic": Published(15.5, 0.5, "1/8", "Xu, Harfoush, Rhee, INFOCOM 2004", windows=(100, 400)),
    # HighSpeed is near Reno up to ~100 segments (a(w) < 2, b(w) > 0.45): the
    # formula's slope shows from there up (the cap makes it 80–431 at 20 ms).
    "highspeed": Published(0.12, 0.835, "b(w): 0.5 at 38 segments → 0.1 at 83000", "RFC 3649",
                           windows=(80, 600)),
    "scalable": Published(0.08, 1.0, "1/8", "Kelly, CCR 2003"),
    "htcp": Published(None, None, "1 − RTT_min/RTT_max, in [0.2, 0.5]",
                      "Leith, Shorten, PFLDnet 2004", windows=(45, 300), plan_as="highspeed"),
    "cubic": Published(None, None, "0.3 (RFC 9438; 1/5 in the paper)", "RFC 9438",
                       plan_as="reno"),
    "vegas": Published(None, None, "1/2 (Reno's, on loss)", "Brakmo, Peterson, JSAC 1995",
                       plan_as="reno"),
}
