"""A cell of `itb study crossval` as its sweep's index keeps it: one scenario with one
congestion control, on the testbed (emulated) or in ns-3 (simulated)."""

from __future__ import annotations

from itb.sweep.index import IndexCell


class CrossvalCell(IndexCell):
    scenario: str  # steady, single, multi-<C_g>
    cc: str
    backend: str  # emulated | simulated
    capacity_bps: int
    sources: int
    access_bps: int | None  # each source's C_a (None: the access links are unlimited)
    volume_bytes: int  # each transfer's
    window_s: tuple[float, float] | None = None  # steady: the goodput measured over it
    # a --grid cell's path and flows (None: the study's --rtt, a one-BDP queue, together)
    rtt_ms: float | None = None
    buffer_bdp: float | None = None
    cap_bps: int | None = None  # each transfer's pacing cap
    spacing_s: float = 0.0
