"""The service's requests and plans in integers, so that no plan loses a byte.

Dates are nanoseconds since the Unix epoch, rates whole bit/s, volumes bytes: a segment
(from_ns, to_ns, rate_bps) carries rate · (to − from) / 10⁹ bits, and a plan delivers its
request's volume exactly when Σ rate · (to − from) = 8 · volume · 10⁹ — integer
arithmetic, checked without a tolerance. (In float seconds since the epoch a date's step
is 2.4·10⁻⁷ s near 1.8·10⁹: a 1-byte request at 1 Gbit/s, 8 ns, vanished, and plans of
small requests lost or gained bytes.)

The granularity is 1 ns. A plan's last piece runs at the rate available for the whole
nanoseconds its remaining bits fill, and its last nanosecond carries the remainder at a
lower rate, so that its bits are exact: a 10-byte request at up to 300 Mbit/s gets 266 ns
at 300 Mbit/s then 1 ns at 200 Mbit/s. Rates never exceed max-rate nor what the link has
left, and what a plan leaves free beside it lasts at most that one nanosecond (two rates
one bit/s apart over the whole piece left 1 bit/s free for its length: a later request
took it as a sliver of 1 bit/s).

`Usage` (itb.service.usage) holds a link's sum of these plans exactly: a plan added then
removed leaves no trace, so equal neighbours merge and the breakpoints stay bounded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from itb.service.model import Plan, Request
from itb.service.usage import Usage

NS = 10**9  # ns per second
IntSegment = tuple[int, int, int]  # (from ns, to ns, bit/s)


def ns_of(seconds: float) -> int:
    """A date in seconds (a float, as JSON gives it) as whole nanoseconds, exactly rounded."""
    return round(Fraction(seconds) * NS)


def s_of(ns: int) -> float:
    """Whole nanoseconds as float seconds (the nearest float)."""
    return ns / NS


@dataclass(frozen=True)
class IntRequest:
    id: str
    link: str
    volume_bytes: int
    release_ns: int
    deadline_ns: int
    max_rate_bps: int

    def __post_init__(self) -> None:
        if self.volume_bytes <= 0:
            raise ValueError(f"{self.id}: the volume must be positive")
        if not self.deadline_ns > self.release_ns:
            raise ValueError(f"{self.id}: the deadline must be after the release")
        if self.max_rate_bps <= 0:
            raise ValueError(f"{self.id}: max-rate must be at least 1 bit/s")

    @property
    def bit_ns(self) -> int:
        """The volume in bit·ns: what a plan's Σ rate · duration must come to."""
        return 8 * self.volume_bytes * NS

    def as_float(self) -> Request:
        """In the planner's float seconds (for a transfer's scenario; approximate)."""
        return Request(
            self.id, self.volume_bytes, s_of(self.release_ns), s_of(self.deadline_ns),
            float(self.max_rate_bps), self.link,
        )  # fmt: skip


@dataclass(frozen=True)
class IntPlan:
    """Segments in order, not overlapping, rates > 0."""

    request_id: str
    segments: tuple[IntSegment, ...]

    @property
    def start_ns(self) -> int:
        return self.segments[0][0]

    @property
    def finish_ns(self) -> int:
        return self.segments[-1][1]

    @property
    def bit_ns(self) -> int:
        return sum((b - a) * r for a, b, r in self.segments)

    def profile(self) -> list[tuple[float, float]]:
        """[[date s, bit/s], …] as the API answers it (a 0 where a gap begins and at the
        finish); approximate dates: the exact plan is `segments`."""
        out: list[tuple[float, float]] = []
        end = None
        for a, b, r in self.segments:
            if out and end == a:
                out[-1] = (s_of(a), float(r))
            else:
                out.append((s_of(a), float(r)))
            out.append((s_of(b), 0.0))
            end = b
        return out

    def as_float(self) -> Plan:
        return Plan(
            self.request_id, tuple((s_of(a), s_of(b), float(r)) for a, b, r in self.segments)
        )


def joined(segments: Iterable[IntSegment]) -> tuple[IntSegment, ...]:
    """In order, empty ones dropped, touching neighbours of one rate joined."""
    out: list[IntSegment] = []
    for a, b, r in sorted(segments):
        if b <= a or r <= 0:
            continue
        if out and out[-1][1] == a and out[-1][2] == r:
            out[-1] = (out[-1][0], b, r)
        else:
            out.append((a, b, r))
    return tuple(out)


def fill_early(
    usage: Usage, cap_bps: int, start_ns: int, end_ns: int, max_rate_bps: int, bit_ns: int
) -> tuple[IntSegment, ...] | None:
    """`bit_ns` at up to max-rate in what the capacity leaves between the dates, as early
    as it fits: the segments, or None when the whole volume does not fit."""
    out: list[IntSegment] = []
    need = bit_ns
    for a, b, used in usage.pieces(start_ns, end_ns):
        rate = min(max_rate_bps, cap_bps - used)
        if rate <= 0:
            continue
        if rate * (b - a) < need:
            out.append((a, b, rate))
            need -= rate * (b - a)
            continue
        k, rem = divmod(need, rate)  # k ns at the rate, then one at what is left (< rate)
        out += [(a, a + k, rate), (a + k, a + k + 1, rem)]  # (≤ b − a: need ≤ rate · (b − a))
        return joined(out)
    return None


def free_bit_ns(usage: Usage, cap_bps: int, start_ns: int, end_ns: int, max_rate_bps: int) -> int:
    """What the capacity left between the dates carries at up to max-rate, in bit·ns."""
    return sum(
        (b - a) * min(max_rate_bps, max(0, cap_bps - u))
        for a, b, u in usage.pieces(start_ns, end_ns)
    )


def violations(
    requests: dict[str, IntRequest], plans: dict[str, IntPlan], cap_bps: int
) -> list[str]:
    """The service's checker, exact: each plan inside its window, its segments in order
    and not overlapping, no rate above max-rate, its bits the volume's; the plans together
    within the link's planning capacity at every instant. [] when all hold."""
    out = []
    load: dict[str, Usage] = {}
    for rid, p in plans.items():
        r = requests.get(rid)
        if r is None:
            out.append(f"{rid}: a plan without its request")
            continue
        if not p.segments:
            out.append(f"{rid}: an empty plan")
            continue
        if p.start_ns < r.release_ns or p.finish_ns > r.deadline_ns:
            out.append(f"{rid}: [{p.start_ns}, {p.finish_ns}] ns outside its window")
        if any(not (b > a and x > 0) for a, b, x in p.segments) or any(
            b0 > a1 for (_, b0, _), (a1, _, _) in zip(p.segments, p.segments[1:])
        ):
            out.append(f"{rid}: segments empty, out of order or overlapping")
        if any(x > r.max_rate_bps for _, _, x in p.segments):
            out.append(f"{rid}: a rate above max-rate {r.max_rate_bps}")
        if p.bit_ns != r.bit_ns:
            out.append(f"{rid}: delivers {p.bit_ns / 8 / NS} of {r.volume_bytes} bytes")
        load.setdefault(r.link, Usage()).add(p.segments)
    for link, u in sorted(load.items()):
        out += [
            f"capacity: {x} bit/s on {link} at {a} ns > {cap_bps}"
            for a, _, x in (u.pieces(u.t[0], u.t[-1]) if u.t else ())
            if x > cap_bps
        ]
    return out


def planning_cap(rate_bps: int, margin: float) -> int:
    """B_in · (1 − m) in whole bit/s, rounded down."""
    return math.floor(rate_bps * (1 - margin))
