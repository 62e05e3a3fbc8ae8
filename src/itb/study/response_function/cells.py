"""A cell of `itb study response-function` as its sweep's index keeps it: one algorithm at
one loss rate, with the plan of its flow (itb.sweep.index)."""

from __future__ import annotations

from itb.sweep.index import IndexCell


class ResponseCell(IndexCell):
    cc: str
    p: float  # the loss rate the link applies
    plan_window: float  # segments the published (or planning) response function gives
    warmup_s: float
    measure_s: float
    volume: int  # bytes: room for a flow 3× faster than planned
    rtt_ms: float
    rate_bps: int  # the bottleneck
