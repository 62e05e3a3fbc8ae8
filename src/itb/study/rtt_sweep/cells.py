"""A cell of `itb study rtt-sweep` as its sweep's index keeps it: the congestion control,
the number of flows, the RTT and the window measured (itb.sweep.index)."""

from __future__ import annotations

from itb.sweep.index import IndexCell


class RttSweepCell(IndexCell):
    cc: str
    flows: int
    rtt_ms: float
    capacity_bps: int  # C; every flow paced at C / 10
    window_s: tuple[float, float]  # the timeline's [t0, t1] measured
