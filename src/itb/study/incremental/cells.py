"""A cell of `itb study incremental` as its sweep's index keeps it: the congestion
control, the RTT, how many flows join and how often (itb.sweep.index)."""

from __future__ import annotations

from itb.sweep.index import IndexCell


class IncrementalCell(IndexCell):
    cc: str
    rtt_ms: float
    flows: int
    period_s: float  # flow k (from 0) starts at k × period_s
    capacity_bps: int  # C; every flow paced at C / 10
