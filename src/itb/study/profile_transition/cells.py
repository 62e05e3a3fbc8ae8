"""A cell of `itb study profile transition` as its sweep's index keeps it: the mechanism
and the RTT of its low → high steps (itb.sweep.index)."""

from __future__ import annotations

from itb.sweep.index import IndexCell


class TransitionCell(IndexCell):
    mechanism: str  # "nocc-pacing", "udt", …
    protocol: str  # "tcp" or "udt": how a step's level is taken
    rtt_ms: float
