"""What the planner reads and writes: requests r = (vol, rt, dt, max-rate) on a link of
capacity B_in, and plans (a start, a multi-interval rate profile, a finish).

Dates are seconds (any origin: the service uses the Unix epoch, workloads 0), rates
payload bit/s, volumes bytes. The planner schedules against B_in · (1 − m), m the margin
that leaves room for what the transport does not keep exactly (INRIA RR-6256 §6).
"""

from __future__ import annotations

from dataclasses import dataclass

# A plan's volume is delivered when its profile's integral reaches it within this share:
# float rounding over a few thousand segments (about 1e-13), far below a byte of any
# volume the planner is given; capacity and max-rate are held to the same. (It was 1e-6:
# a request 9e-7 over the free capacity was admitted, its plan that much short.)
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Request:
    id: str
    volume_bytes: int
    release_s: float
    deadline_s: float
    max_rate_bps: float
    link: str = "access"

    def __post_init__(self) -> None:
        if self.volume_bytes <= 0:
            raise ValueError(f"{self.id}: the volume must be positive")
        if not self.deadline_s > self.release_s:
            raise ValueError(f"{self.id}: the deadline must be after the release")
        if self.max_rate_bps <= 0:
            raise ValueError(f"{self.id}: max-rate must be positive")

    @property
    def bits(self) -> float:
        return 8.0 * self.volume_bytes

    def alone_s(self, capacity_bps: float) -> float:
        """The shortest time it can take: at min(max-rate, capacity)."""
        return self.bits / min(self.max_rate_bps, capacity_bps)


Segment = tuple[float, float, float]  # (from s, to s, bit/s)


@dataclass(frozen=True)
class Plan:
    """A request's schedule: piecewise-constant rate segments, in order, not overlapping,
    rates > 0. `start` is the first segment's beginning (t_s), `finish` the last one's end
    (t_f)."""

    request_id: str
    segments: tuple[Segment, ...]

    @property
    def start(self) -> float:
        return self.segments[0][0]

    @property
    def finish(self) -> float:
        return self.segments[-1][1]

    @property
    def bits(self) -> float:
        return sum((b - a) * r for a, b, r in self.segments)

    def profile(self) -> list[tuple[float, float]]:
        """[[date, bit/s], …] as the API answers it: each segment's start with its rate,
        a 0 where a gap begins and at the finish."""
        out: list[tuple[float, float]] = []
        for a, b, r in self.segments:
            if out and out[-1][0] == a:
                out[-1] = (a, r)
            else:
                out.append((a, r))
            out.append((b, 0.0))
        return out

    @classmethod
    def of_profile(cls, request_id: str, profile: list[tuple[float, float]]) -> Plan:
        segs = [
            (float(t0), float(t1), float(r))
            for (t0, r), (t1, _) in zip(profile, profile[1:])
            if r > 0 and t1 > t0
        ]
        return cls(request_id, tuple(segs))


def merged(segments: list[Segment]) -> tuple[Segment, ...]:
    """Segments in order with zero-rate and empty ones dropped and equal neighbours joined."""
    out: list[Segment] = []
    for a, b, r in sorted(segments):
        if b <= a or r <= 0:
            continue
        if out and out[-1][1] == a and abs(out[-1][2] - r) <= TOLERANCE * r:
            out[-1] = (out[-1][0], b, out[-1][2])
        else:
            out.append((a, b, r))
    return tuple(out)
