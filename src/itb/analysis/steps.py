"""A rate profile kept step by step, measured where it matters: on the wire at the
bottleneck (the link emulator's 1 ms log of one link and direction).

A step's rate is payload bit/s; the link counts Ethernet frames, so a sender that
keeps the step exactly puts rate / payload_share on the wire (1514/1448 of it for full
TCP segments with timestamps over a 1500-byte MTU). Each step is measured from
`settle_s` after its date, leaving the transition out (RR-6874 §6.2 measures that part
separately: `itb.analysis.transition`), to the next step's date, or for the last one to
the given end.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel

SETTLE_S = 1.0


class StepRate(BaseModel):
    at_s: float  # the step's date, from the profile's start
    rate_bps: float  # what the profile asks (payload)
    wire_bps: float  # that rate on the wire: rate / payload share
    from_s: float  # the measured span, from the profile's start
    to_s: float
    measured_bps: float | None  # mean wire rate at the bottleneck over the span
    ratio: float | None  # measured / wire_bps


def window_rate(rows: pd.DataFrame, lo_ns: float, hi_ns: float) -> float | None:
    """Mean wire rate (bit/s) of the log rows whose interval starts in [lo, hi) (t_ns is
    an interval's start, as linkem writes it); None if none."""
    t = rows["t_ns"].to_numpy(dtype=float)
    sel = (t >= lo_ns) & (t < hi_ns)
    span = float(rows["interval_s"].to_numpy(dtype=float)[sel].sum())
    if span <= 0:
        return None
    return float(rows["bytes"].to_numpy(dtype=float)[sel].sum() * 8 / span)


def step_rates(rows: pd.DataFrame, start_ns: int, steps: Sequence[tuple[int, int]],
               payload_share: float, end_ns: int, settle_s: float = SETTLE_S) -> list[StepRate]:
    """Each step's measured wire rate against the profile. `rows`: the bottleneck log of
    one link, direction and repetition (CLOCK_MONOTONIC);
    `start_ns`: when the profile started; steps (µs, payload bit/s). A step shorter than
    `settle_s` (or cut by `end_ns`) has no measurement."""
    if not 0 < payload_share <= 1:
        raise ValueError(f"payload share must be in (0, 1], got {payload_share!r}")
    out = []
    end_s = (end_ns - start_ns) / 1e9
    for k, (at_us, rate) in enumerate(steps):
        at = at_us / 1e6
        to = min(steps[k + 1][0] / 1e6 if k + 1 < len(steps) else end_s, end_s)
        lo = at + settle_s
        got = window_rate(rows, start_ns + lo * 1e9, start_ns + to * 1e9) if to > lo else None
        wire = rate / payload_share
        out.append(StepRate(at_s=at, rate_bps=float(rate), wire_bps=wire, from_s=lo, to_s=to,
                            measured_bps=got, ratio=None if got is None else got / wire))
    return out


def worst_ratio_error(rates: Sequence[StepRate]) -> float | None:
    """The largest |ratio − 1| over the measured steps (None: none measured)."""
    errs = [abs(r.ratio - 1) for r in rates if r.ratio is not None and np.isfinite(r.ratio)]
    return max(errs) if errs else None
