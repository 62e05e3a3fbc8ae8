"""`itb study multiplexing` (docs/studies.md): the multiplexing factor at one congestion
and reverse-traffic level (R. Guillier, S. Soudan, P. Vicat-Blanc Primet, "TCP Variants
and Transfer Time Predictability in Very High Speed Networks", INRIA RR-6256, 2007,
§4.3.2, Figures 9 and 10: 2 flows on a 1 Gbit/s
bottleneck against 20 on 10 Gbit/s, the same C_g = 2.0 with reverse traffic; the latest
completion time 30 % shorter and the aggregate goodput's swings 20 % of the link against
50 % with more flows).

Points: per congestion control and aggregation level K (the bottleneck over one source's
C_a), one BU cell of M = C_g·K forward sources and R·K reverse ones started after them,
scaled to this testbed's C: more, slower sources for a larger K.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.multiplexing.args import MultiplexingArgs

if TYPE_CHECKING:
    from itb.study.multiplexing.cells import MultiplexingCell
    from itb.study.multiplexing.results import Results
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class Multiplexing:
    name = ("study", "multiplexing")
    kind = "multiplexing"
    rank = 34
    group_help = None  # `itb study` is the CLI's
    Args = MultiplexingArgs
    help = """The multiplexing factor at a fixed congestion and reverse level (RR-6244 §4.3.2).

    Per congestion control and aggregation level K (--k, default 1 and 10), one BU cell of
    C_g·K forward sources at C_a = C/K and R·K reverse sources started after them. Reports
    the mean and latest completion time, how much the bottleneck's aggregate throughput
    swings (its CoV in 1 s bins while the forward transfers run), and K against the
    first K by Fieller's interval on the latest completion time. Resumable like `itb
    bench` (docs/studies.md).
    """

    def plan(self, args: MultiplexingArgs, out: Path, say: Say) -> Sweep[MultiplexingCell]:
        from itb.study.multiplexing.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[MultiplexingCell], args: MultiplexingArgs) -> Results:
        from itb.study.multiplexing.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[Results], args: MultiplexingArgs) -> list[Shown]:
        from itb.study.multiplexing.summary import tables

        return tables(outcome, args)


STUDY: Study[MultiplexingArgs, Results, MultiplexingCell] = Multiplexing()
