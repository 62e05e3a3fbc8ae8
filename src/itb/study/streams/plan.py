"""The plan of `itb study streams`: per congestion control and streams per node, one cell
of long-lived flows (itb.study.longlived), one per node, each of that many streams."""

from __future__ import annotations

from pathlib import Path

from itb.study.longlived import flows_doc
from itb.study.streams.args import StreamsArgs
from itb.study.streams.cells import StreamsCell
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell


def sweep_of(a: StreamsArgs, out: Path) -> Sweep[StreamsCell]:
    cells = []
    t0, t1 = a.window_s
    for cc in a.ccs:
        for n in a.streams:
            name = f"{cc}-s{n}"
            doc = flows_doc(
                f"streams-{name}",
                f"{a.nodes} nodes of {n} {cc} streams at C/10 each, RTT {a.rtt_ms:g} ms (NXE §4.1)",
                capacity_bps=a.capacity_bps,
                rtt_ms=a.rtt_ms,
                ccs=[cc] * a.nodes,
                starts_s=[k * a.spacing for k in range(a.nodes)],
                end_s=t1,
                repeat=a.repeat,
                seed=a.seed,
                streams=n,
            )
            cell = StreamsCell(
                name=name,
                cc=cc,
                streams=n,
                nodes=a.nodes,
                capacity_bps=a.capacity_bps,
                window_s=(t0, t1),
            )
            cells.append(SweepCell(cell, doc))
    return Sweep(out, "streams", SweepIndex[StreamsCell], a.key(), cells, a.repeat, a.seed)
