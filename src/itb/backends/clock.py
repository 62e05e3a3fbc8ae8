"""A remote clock against this machine's (CLOCK_MONOTONIC), NTP-style: send our time,
the other side answers with its own, we note when the answer came back. The exchange
with the shortest round trip gives the offset (its error is at most half that trip)."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from dataclasses import dataclass

from itb.errors import BackendError

SAMPLES = 16
REPLY_TIMEOUT_S = 5.0


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
        return {
            "offset_ns": self.offset_ns,
            "rtt_ns": self.rtt_ns,
            "uncertainty_ns": self.uncertainty_ns,
            "spread_ns": self.spread_ns,
            "samples": self.samples,
            "same_clock": self.same_clock,
        }


SAME = ClockEstimate(0, 0, 0, 0, True)


def estimate(
    exchange: Callable[[int], tuple[int, int, int]], samples: int = SAMPLES
) -> ClockEstimate:
    """`exchange(seq)` → (sent, the other clock's reading, received), our times in ns."""
    found = []
    for seq in range(samples):
        t1, t_node, t3 = exchange(seq)
        found.append((t3 - t1, t_node - (t1 + t3) // 2))
    found.sort()
    quick = [o for _, o in found[: max(1, len(found) // 2)]]
    rtt, offset = found[0]
    return ClockEstimate(offset, rtt, max(quick) - min(quick), len(found))


class Replies:
    """The clock answers of one worker ({"ev": "clock", "seq", "t_ns"} events), noted
    with the time they came back; `exchange` is what `estimate` calls."""

    def __init__(self, send: Callable[[int], None], who: str, timeout_s: float = REPLY_TIMEOUT_S):
        self.send, self.who, self.timeout_s = send, who, timeout_s
        self.q: queue.Queue = queue.Queue()

    def note(self, ev: dict) -> None:
        """From the worker's reader thread, for each clock event (None: it stopped)."""
        self.q.put(None if ev is None else (ev.get("seq"), ev.get("t_ns"), time.monotonic_ns()))

    def exchange(self, seq: int) -> tuple[int, int, int]:
        t1 = time.monotonic_ns()
        self.send(seq)
        while True:
            try:
                got = self.q.get(timeout=self.timeout_s)
            except queue.Empty:
                raise BackendError(
                    f"{self.who} did not answer a clock request within {self.timeout_s:.0f} s"
                ) from None
            if got is None:
                raise BackendError(f"{self.who} stopped")
            if got[0] == seq:
                return t1, got[1], got[2]

    def estimate(self) -> ClockEstimate:
        while not self.q.empty():  # late answers of an earlier measurement
            self.q.get_nowait()
        return estimate(self.exchange)
