"""A cell of `itb study pacing-vs-tbf` as its sweep's index keeps it (itb.sweep.index):
the congestion control, RTT, socket buffer, pattern, mechanism, and the fluid model's
completion time of its flows."""

from __future__ import annotations

from itb.sweep.index import IndexCell


class PacingTbfCell(IndexCell):
    cc: str
    rtt_ms: float
    buffer_bytes: int
    pattern: str  # 1flow, 2flows-1host, 2flows-2hosts
    mechanism: str  # tbf or pacing
    flows: int
    ideal_s: float  # each flow's completion time at its fair payload rate
