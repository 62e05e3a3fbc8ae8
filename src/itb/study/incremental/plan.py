"""The plan of `itb study incremental`: per congestion control and RTT, one cell of
long-lived flows (itb.study.longlived), flow k starting at k × period, all stopped one
period after the last one started."""

from __future__ import annotations

from pathlib import Path

from itb.study.incremental.args import IncrementalArgs
from itb.study.incremental.cells import IncrementalCell
from itb.study.longlived import flows_doc
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell


def sweep_of(a: IncrementalArgs, out: Path) -> Sweep[IncrementalCell]:
    cells = []
    for cc in a.ccs:
        for rtt in a.rtts_ms:
            name = f"{cc}-rtt{rtt:g}"
            doc = flows_doc(
                f"incremental-{name}",
                f"{a.flows} {cc} flows at C/10 each joining {a.period:g} s apart, RTT {rtt:g} ms "
                "(RR-6244 §5.5.1)",
                capacity_bps=a.capacity_bps,
                rtt_ms=rtt,
                ccs=[cc] * a.flows,
                starts_s=[k * a.period for k in range(a.flows)],
                end_s=a.flows * a.period,
                repeat=a.repeat,
                seed=a.seed,
            )
            cell = IncrementalCell(
                name=name,
                cc=cc,
                rtt_ms=rtt,
                flows=a.flows,
                period_s=a.period,
                capacity_bps=a.capacity_bps,
            )
            cells.append(SweepCell(cell, doc))
    return Sweep(out, "incremental", SweepIndex[IncrementalCell], a.key(), cells, a.repeat, a.seed)
