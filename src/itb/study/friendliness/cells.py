"""A cell of `itb study friendliness` as its sweep's index keeps it: the tested protocol
(or "alone": every source on the reference), the reference, the congestion level and how
the cell was realised (itb.sweep.index)."""

from __future__ import annotations

from itb.suite.realisation import Realisation
from itb.sweep.index import IndexCell


class FriendlinessCell(IndexCell):
    tested: str  # the tested protocol, or ALONE (plan): the reference alone
    reference: str
    c_g: float  # the congestion level asked for
    c_g_realised: float  # M / K
    realisation: Realisation
