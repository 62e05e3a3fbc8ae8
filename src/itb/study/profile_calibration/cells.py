"""A cell of `itb profile calibrate` as its sweep's index keeps it: the RTT and the input
of each of its transfers (itb.sweep.index)."""

from __future__ import annotations

from itb.sweep.index import IndexCell


class CalibrationCell(IndexCell):
    rtt_ms: float
    inputs: dict[str, int]  # transfer id → the input rate (bit/s) its sender is asked
