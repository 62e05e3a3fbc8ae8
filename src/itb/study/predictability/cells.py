"""A cell of `itb study predictability` as its sweep's index keeps it: the point (protocol,
congestion level, reverse level, spacing), what its sources realise and how
(itb.sweep.index)."""

from __future__ import annotations

from itb.suite.realisation import Realisation
from itb.sweep.index import IndexCell


class PredictabilityCell(IndexCell):
    cc: str
    c_g: float  # nominal
    reverse: float | str  # a level, or "sym" (as many reverse as forward sources)
    r_level: float  # the reverse level it gives
    spacing_s: float  # asked for (0: synchronised)
    spacing_realised_s: float  # after the start-span cap
    c_g_realised: float  # round(C_g·K)/K: the sources that actually run
    realisation: Realisation
