"""A cell of `itb study profile margin` as its sweep's index keeps it: what its one
transfer asks for and what the model predicts (itb.sweep.index)."""

from __future__ import annotations

from itb.sweep.index import IndexCell


class MarginCell(IndexCell):
    rtt_ms: float
    margin: float  # m: the share of C left free
    target_bps: float  # (1 − m)·C, the throughput asked for at the bottleneck
    input_bps: int  # the model's input for it (eq. 3): what the sender is asked
    volume: int  # bytes, sized for a predicted completion of --seconds
    predicted_s: float  # the model's completion time (eq. 6)
    extrapolated: bool  # the input lies beyond the inputs the model was fitted on
