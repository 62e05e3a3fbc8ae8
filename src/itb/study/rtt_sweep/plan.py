"""The plan of `itb study rtt-sweep`: per congestion control, flow count and RTT, one
cell of long-lived flows (itb.study.longlived) started `spacing` apart and measured over
`seconds` from `warmup` after the last start."""

from __future__ import annotations

from pathlib import Path

from itb.study.longlived import flows_doc
from itb.study.rtt_sweep.args import RttSweepArgs
from itb.study.rtt_sweep.cells import RttSweepCell
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell


def window_of(a: RttSweepArgs, flows: int) -> tuple[float, float]:
    """[t0, t1] of the timeline measured: from `warmup` after the last start, `seconds`."""
    t0 = a.spacing * (flows - 1) + a.warmup
    return t0, t0 + a.seconds


def sweep_of(a: RttSweepArgs, out: Path) -> Sweep[RttSweepCell]:
    cells = []
    for cc in a.ccs:
        for n in a.flows:
            t0, t1 = window_of(a, n)
            for rtt in a.rtts_ms:
                name = f"{cc}-n{n}-rtt{rtt:g}"
                doc = flows_doc(
                    f"rtt-sweep-{name}",
                    f"{n} {cc} flows at C/10 each, RTT {rtt:g} ms (RR-6244 §5.5.1)",
                    capacity_bps=a.capacity_bps,
                    rtt_ms=rtt,
                    ccs=[cc] * n,
                    starts_s=[k * a.spacing for k in range(n)],
                    end_s=t1,
                    repeat=a.repeat,
                    seed=a.seed,
                )
                cell = RttSweepCell(
                    name=name,
                    cc=cc,
                    flows=n,
                    rtt_ms=rtt,
                    capacity_bps=a.capacity_bps,
                    window_s=(t0, t1),
                )
                cells.append(SweepCell(cell, doc))
    return Sweep(out, "rtt-sweep", SweepIndex[RttSweepCell], a.key(), cells, a.repeat, a.seed)
