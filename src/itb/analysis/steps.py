"""A rate profile kept step by step, measured where it matters: on the wire at the
bottleneck (the link emulator's 1 ms log of one link and direction).

A step's rate is payload bit/s; the link counts Ethernet frames, so a sender that
keeps the step exactly puts rate / payload_share on the wire (1514/1448 of it for full
TCP segments with timestamps over a 1500-byte MTU). Each step is measured from
`settle_s` after its date, leaving the transition out (RR-6874 §6.2 measures that part
separately: `itb.study.profile_transition.cost`), to the next step's date, or for the last
one to the given end.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel

from itb import rundir
from itb.analysis.series import interval_starts, select_link
from itb.rundir.records import ProcRecord, ResultView, read_events, read_record

SETTLE_S = 1.0
TAIL_S = 0.2  # the last step ends this long before the transfer or command does


class StepRate(BaseModel):
    at_s: float  # the step's date, from the profile's start
    rate_bps: float  # what the profile asks (payload)
    wire_bps: float  # that rate on the wire: rate / payload share
    from_s: float  # the measured span, from the profile's start
    to_s: float
    measured_bps: float | None  # mean wire rate at the bottleneck over the span
    ratio: float | None  # measured / wire_bps


def window_rate(rows: pd.DataFrame, lo_ns: float, hi_ns: float) -> float | None:
    """Mean wire rate (bit/s) of the log rows whose interval starts in [lo, hi) (the
    table's t_ns is an interval's end); None if none."""
    t = interval_starts(rows).to_numpy(dtype=float)
    sel = (t >= lo_ns) & (t < hi_ns)
    span = float(rows["interval_s"].to_numpy(dtype=float)[sel].sum())
    if span <= 0:
        return None
    return float(rows["bytes"].to_numpy(dtype=float)[sel].sum() * 8 / span)


def step_rates(
    rows: pd.DataFrame,
    start_ns: int,
    steps: Sequence[tuple[int, int]],
    payload_share: float,
    end_ns: int,
    settle_s: float = SETTLE_S,
) -> list[StepRate]:
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
        out.append(
            StepRate(
                at_s=at,
                rate_bps=float(rate),
                wire_bps=wire,
                from_s=lo,
                to_s=to,
                measured_bps=got,
                ratio=None if got is None or wire == 0 else got / wire,  # a pause: no ratio
            )
        )
    return out


def worst_ratio_error(rates: Sequence[StepRate]) -> float | None:
    """The largest |ratio − 1| over the measured steps (None: none measured)."""
    errs = [abs(r.ratio - 1) for r in rates if r.ratio is not None and np.isfinite(r.ratio)]
    return max(errs) if errs else None


class ProfileKept(BaseModel):
    """How one transfer or `[[command]]` with a rate profile kept it in one repetition,
    step by step, on one direction of the run's bottleneck. The link's rate is the
    event's own only when nothing else sent that way meanwhile: otherwise `shared_with`
    names what did and no step has a ratio (its `measured_bps` is the link's total)."""

    event: str
    kind: str  # "transfer" or "command"
    repetition: int
    link: str
    direction: str  # of the link: "forward" or "reverse"
    shared_with: list[str] = []
    steps: list[StepRate]

    @property
    def worst(self) -> float | None:
        return worst_ratio_error(self.steps)


def _span_and_direction(
    e: dict, tr: pd.DataFrame, procs: dict[str, ProcRecord], sides: dict[str, str]
):
    """(start, end, direction) of a profiled event; None where it has no span."""
    direction: str | None
    if e["kind"] == "transfer":
        row = tr[tr["transfer"] == e["id"]]
        if not len(row):
            return None
        start, end = row["start_ns"].iloc[0], row["end_ns"].iloc[0]
        direction = "reverse" if e.get("direction") == "reverse" else "forward"
    else:
        p = procs.get(f"{e['id']}.command") or ProcRecord()
        start, end = p.dispatched_ns, p.exited_ns
        direction = {"left": "forward", "right": "reverse"}.get(sides.get(e["host"]) or "")
    if (
        direction is None
        or start is None
        or end is None
        or not (np.isfinite(start) and np.isfinite(end))
    ):
        return None
    return int(start), int(end), direction


def _others(
    e: dict,
    events: list[dict],
    tr: pd.DataFrame,
    procs: dict[str, ProcRecord],
    sides: dict[str, str],
    span: tuple[int, int, str],
) -> list[str]:
    """What else sent in the same direction during the span: transfers, ping-pongs and
    UDP streams from a host on that side, and commands on a host of that side."""
    start, end, direction = span
    side = "left" if direction == "forward" else "right"
    out = []
    for row in tr.itertuples():
        lo, hi = row.start_ns, row.end_ns if np.isfinite(row.end_ns) else end
        if (
            row.transfer != e["id"]
            and sides.get(row.src) == side
            and np.isfinite(lo)
            and lo < end
            and hi > start
        ):
            out.append(str(row.transfer))
    for o in events:
        p = procs.get(f"{o['id']}.command") or ProcRecord()
        lo, hi = p.dispatched_ns, end if p.exited_ns is None else p.exited_ns
        if (
            o["kind"] == "command"
            and o["id"] != e["id"]
            and sides.get(o["host"]) == side
            and lo is not None
            and lo < end
            and hi > start
        ):
            out.append(o["id"])
    return sorted(set(out))


def profiles_kept(
    run: Path,
    transfers: pd.DataFrame,
    bottleneck: pd.DataFrame,
    link: str | None,
    sides: dict[str, str],
    payload_share: dict[str, float],
) -> list[ProfileKept]:
    """Every profile of the run's repetitions measured on `link`: a transfer from its
    start to its end (its direction), a command from its start to its exit (the side of
    its host: left sends forward). Dates count from when each started. `payload_share`
    by protocol ("tcp", "udt")."""
    if link is None or bottleneck is None or not len(bottleneck):
        return []
    out = []
    for r in sorted(int(x) for x in bottleneck["repetition"].unique()):
        rd = rundir.rep_dir(run, r)
        if not (rd / "events.json").exists():
            continue
        events = read_events(rd / "events.json")
        result = rd / "result.json"
        procs = read_record(result, ResultView).procs if result.exists() else {}
        tr = transfers[transfers["repetition"] == r] if len(transfers) else transfers
        for e in events:
            if not e.get("profile") or e["kind"] not in ("transfer", "command"):
                continue
            span = _span_and_direction(e, tr, procs, sides)
            if span is None:
                continue
            start, end, direction = span
            rows = select_link(bottleneck, direction, link)
            rows = rows[rows["repetition"] == r]
            steps = step_rates(
                rows,
                start,
                [tuple(s) for s in e["profile"]],
                payload_share[e.get("protocol", "tcp")],
                end - int(TAIL_S * 1e9),
            )
            shared = _others(e, events, tr, procs, sides, span) if len(tr) or events else []
            if shared:
                steps = [st.model_copy(update={"ratio": None}) for st in steps]
            out.append(
                ProfileKept(
                    event=e["id"],
                    kind=e["kind"],
                    repetition=r,
                    link=link,
                    direction=direction,
                    shared_with=shared,
                    steps=steps,
                )
            )
    return out
