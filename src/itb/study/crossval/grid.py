"""`itb study crossval --grid`: cells spread over the space the studies use, not one
point (docs/simulation.md). Not a full factorial: a base cell and each axis moved from
it one at a time, plus the issue's two scenarios and corners the studies reach (many
flows in a √k queue, a long path with a tiny queue, many capped flows on a short path),
each run for every --cc, emulated and simulated.

Axes and where the grid covers them: the queue 0.1–2 BDP; the RTT 10–200 ms; the flows
started together and staggered; paced by their access links and by per-transfer rate
caps (SO_MAX_PACING_RATE), or not at all; 1–12 flows; rates up to 1 Gbit/s (the
testbed keeps them, the simulator runs them in minutes on two cores).

Each transfer carries what its fair share (C / n, at most its access rate or cap) moves
in --seconds, unless the point fixes its volume (the issue's scenarios)."""

from __future__ import annotations

import math
from dataclasses import dataclass

MBIT = 1_000_000


@dataclass(frozen=True)
class Point:
    name: str
    capacity_bps: int
    rtt_ms: float
    buffer_bdp: float  # the bottleneck's queue, in BDPs
    sources: int
    access_bps: int | None = None  # each source's access link (None: unlimited)
    cap_bps: int | None = None  # each transfer's pacing cap (`rate`; None: none)
    spacing_s: float = 0.0  # between the transfers' starts
    volume_bytes: int | None = None  # each transfer's (None: its fair share · --seconds)
    what: str = ""

    def share_bps(self) -> float:
        """A transfer's fair share of the bottleneck, at most its own limit."""
        limits = [self.capacity_bps / self.sources, self.access_bps, self.cap_bps]
        return min(x for x in limits if x)

    def volume(self, seconds: float) -> int:
        if self.volume_bytes is not None:
            return self.volume_bytes
        return int(self.share_bps() * seconds / 8)

    def load(self) -> float | None:
        """C_g when the sources are held below C by their access links or caps."""
        each = self.access_bps or self.cap_bps
        return self.sources * each / self.capacity_bps if each else None


# the base: 4 flows at once on 500 Mbit/s, 50 ms, a one-BDP queue, unpaced
BASE = dict(capacity_bps=500 * MBIT, rtt_ms=50.0, buffer_bdp=1.0, sources=4)


def _moved(name: str, what: str, **change) -> Point:
    return Point(name=name, what=what, **(BASE | change))


SPACE: tuple[Point, ...] = (
    _moved("base", "4 flows together, 500 Mbit/s, 50 ms, 1 BDP"),
    _moved("buf0.1", "the base with a 0.1-BDP queue", buffer_bdp=0.1),
    _moved("buf0.5", "the base with a half-BDP queue", buffer_bdp=0.5),
    _moved("buf2", "the base with a 2-BDP queue", buffer_bdp=2.0),
    _moved("rtt10", "the base at 10 ms", rtt_ms=10.0),
    _moved("rtt200", "the base at 200 ms", rtt_ms=200.0),
    _moved("n1", "the base with one flow", sources=1),
    _moved("n12", "the base with 12 flows", sources=12),
    _moved("stagger", "the base's flows started 1 s apart", spacing_s=1.0),
    _moved("access2", "the base's sources on 250 Mbit/s access links (C_g 2)",
           access_bps=250 * MBIT),
    _moved("cap2", "the base's transfers capped at 250 Mbit/s (C_g 2)", cap_bps=250 * MBIT),
    Point("issue-a", 1000 * MBIT, 20.0, 1.0, 4, cap_bps=500 * MBIT, volume_bytes=100_000_000,
          what="4 transfers of 100 MB capped at 500 Mbit/s, 1 Gbit/s, 20 ms, 1 BDP"),
    Point("issue-b", 500 * MBIT, 50.0, 0.5, 3, spacing_s=2.0, volume_bytes=150_000_000,
          what="3 transfers of 150 MB 2 s apart, 500 Mbit/s, 50 ms, 0.5 BDP"),
    Point("sqrtk12", 1000 * MBIT, 20.0, round(1 / math.sqrt(12), 3), 12, spacing_s=0.25,
          what="12 flows 0.25 s apart, 1 Gbit/s, 20 ms, a BDP/√12 queue"),
    Point("long-tiny", 200 * MBIT, 200.0, 0.1, 2, spacing_s=1.0,
          what="2 flows 1 s apart, 200 Mbit/s, 200 ms, a 0.1-BDP queue"),
    Point("cap12-rtt10", 1000 * MBIT, 10.0, 1.0, 12, cap_bps=100 * MBIT,
          what="12 transfers capped at 100 Mbit/s (C_g 1.2), 1 Gbit/s, 10 ms, 1 BDP"),
)  # fmt: skip

# the code path on a small scale, for the tests: two cells of two flows at 20 Mbit/s
TINY: tuple[Point, ...] = (
    Point("tiny-stagger", 20 * MBIT, 20.0, 0.5, 2, spacing_s=0.5, what="2 flows 0.5 s apart"),
    Point("tiny-cap", 20 * MBIT, 10.0, 1.0, 2, cap_bps=5 * MBIT, what="2 capped flows"),
)

GRIDS = {"space": SPACE, "tiny": TINY}
