"""HighSpeed TCP's AIMD table as Linux's tcp_highspeed.c keeps it (RFC 3649).

Rows: Appendix B's windows w, where a(w) reaches 1, 2, ..., 72 segments, and the
decrease b(w) from section 5's formula in 1/256, rounded down. Linux applies row i to
windows above row i - 1's and up to row i's: +(i + 1) segments per RTT, and a decrease of
b(row i) / 256. bpf/gen_highspeed_table.py writes the eBPF program's header from these
rows; the differential test compares them with the kernel's own table.
"""

from __future__ import annotations

import bisect
import math

LOW_WINDOW, HIGH_WINDOW, HIGH_DECREASE = 38, 83000, 0.1

# RFC 3649, Appendix B: w at which a(w) = 1, 2, ..., 72 segments.
WINDOWS = (
    38,
    118,
    221,
    347,
    495,
    663,
    851,
    1058,
    1284,
    1529,
    1793,
    2076,
    2378,
    2699,
    3039,
    3399,
    3778,
    4177,
    4596,
    5036,
    5497,
    5979,
    6483,
    7009,
    7558,
    8130,
    8726,
    9346,
    9991,
    10661,
    11358,
    12082,
    12834,
    13614,
    14424,
    15265,
    16137,
    17042,
    17981,
    18955,
    19965,
    21013,
    22101,
    23230,
    24402,
    25618,
    26881,
    28193,
    29557,
    30975,
    32450,
    33986,
    35586,
    37253,
    38992,
    40808,
    42707,
    44694,
    46776,
    48961,
    51258,
    53677,
    56230,
    58932,
    61799,
    64851,
    68113,
    71617,
    75401,
    79517,
    84035,
    89053,
)


def b_of(w: float) -> float:
    """RFC 3649 section 5: 0.5 at Low_Window falling log-linearly to 0.1 at High_Window."""
    span = math.log(HIGH_WINDOW) - math.log(LOW_WINDOW)
    return (HIGH_DECREASE - 0.5) * (math.log(w) - math.log(LOW_WINDOW)) / span + 0.5


def rows() -> list[tuple[int, int]]:
    """(window, b(w) in 1/256 rounded down), one per a(w) = 1 .. 72."""
    return [(w, math.floor(b_of(w) * 256)) for w in WINDOWS]


def row_of(cwnd: float) -> int:
    """The row Linux uses at this window: the first whose window is not below it."""
    return min(bisect.bisect_left(WINDOWS, cwnd), len(WINDOWS) - 1)


def decrease(cwnd: float) -> float:
    """The share of cwnd a congestion event gives up at this window, as Linux applies it."""
    return rows()[row_of(cwnd)][1] / 256
