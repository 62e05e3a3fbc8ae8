"""A cell of `itb study streams` as its sweep's index keeps it (itb.sweep.index)."""

from __future__ import annotations

from itb.sweep.index import IndexCell


class StreamsCell(IndexCell):
    cc: str
    streams: int  # per node
    nodes: int
    capacity_bps: int  # C; each node's streams share C / 10
    window_s: tuple[float, float]  # the timeline's [t0, t1] measured
