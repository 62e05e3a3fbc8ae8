"""The plan of `itb study multiplexing`: per congestion control and K, one BU cell
(itb.suite.apps.bulk) of the class (K, RTT, C_g, R), the reverse sources started after
the forward ones (as the predictability study plans them)."""

from __future__ import annotations

from pathlib import Path

from itb.study.multiplexing.args import MultiplexingArgs
from itb.study.multiplexing.cells import MultiplexingCell
from itb.suite import apps
from itb.suite.classes import ItbClass
from itb.suite.realisation import Realisation
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell


def sweep_of(a: MultiplexingArgs, out: Path) -> Sweep[MultiplexingCell]:
    cells = []
    for cc in a.ccs:
        for k in a.ks:
            cls = ItbClass("F", k, a.rtt_ms, a.c_g, a.r, f"multiplexing K = {k}")
            cs = a.scale.of(cls)
            name = f"{cc}-k{k}"
            g = apps.bulk(
                apps.Cell("BU", cls, cc), cs, 1.0, max_start_span=a.max_span, reverse_after=True
            )
            g.doc["experiment"].update(repetitions=a.repeat, seed=a.seed, name=f"mux-{name}")
            g.doc["testbed"]["name"] = f"mux-{name}"
            cells.append(
                SweepCell(
                    MultiplexingCell(
                        name=name,
                        cc=cc,
                        k=k,
                        forward_sources=cls.forward_sources,
                        reverse_sources=cls.reverse_sources,
                        forward_share=cls.forward_share,
                        capacity_bps=cs.capacity_bps,
                        realisation=Realisation.model_validate(
                            g.realisation | {"scale": cs.to_json()}
                        ),
                    ),
                    g.doc,
                )
            )
    return Sweep(
        out, "multiplexing", SweepIndex[MultiplexingCell], a.key(), cells, a.repeat, a.seed
    )
