"""A remote clock against this machine's (CLOCK_MONOTONIC), NTP-style: send our time,
the other side answers with its own, we note when the answer came back. The exchange
with the shortest round trip gives the offset (its error is at most half that trip)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

SAMPLES = 16


@dataclass
class ClockEstimate:
    """The node's clock minus the engine's."""

    offset_ns: int
    rtt_ns: int
    spread_ns: int  # range of the offsets of the quicker half of the exchanges
    samples: int
    same_clock: bool = False  # a local namespace: the engine's own clock, nothing measured

    @property
    def uncertainty_ns(self) -> int:
        return (self.rtt_ns + 1) // 2  # rounded up: the bound holds for an odd round trip

    def to_json(self) -> dict:
        return {"offset_ns": self.offset_ns, "rtt_ns": self.rtt_ns,
                "uncertainty_ns": self.uncertainty_ns, "spread_ns": self.spread_ns,
                "samples": self.samples, "same_clock": self.same_clock}


SAME = ClockEstimate(0, 0, 0, 0, True)


def estimate(exchange: Callable[[int], tuple[int, int, int]], samples: int = SAMPLES) -> ClockEstimate:
    """`exchange(seq)` → (sent, the other clock's reading, received), our times in ns."""
    found = []
    for seq in range(samples):
        t1, t_node, t3 = exchange(seq)
        found.append((t3 - t1, t_node - (t1 + t3) // 2))
    found.sort()
    quick = [o for _, o in found[: max(1, len(found) // 2)]]
    rtt, offset = found[0]
    return ClockEstimate(offset, rtt, max(quick) - min(quick), len(found))
