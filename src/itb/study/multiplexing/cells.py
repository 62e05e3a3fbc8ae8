"""A cell of `itb study multiplexing` as its sweep's index keeps it: the protocol, the
aggregation level and how the class was realised (itb.sweep.index)."""

from __future__ import annotations

from itb.suite.realisation import Realisation
from itb.sweep.index import IndexCell


class MultiplexingCell(IndexCell):
    cc: str
    k: int
    forward_sources: int
    reverse_sources: int
    forward_share: float  # what a forward source offers, as a share of its C_a
    capacity_bps: int
    realisation: Realisation
