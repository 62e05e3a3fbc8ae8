"""`itb study rtt-sweep` (docs/studies.md): mean goodput and fairness of long-lived
flows against the RTT, without and with congestion (INRIA RR-6244 §5.5.1, Figures 5
and 6: 5 or 12 flows of 1 Gbit/s hosts on a 10 Gbit/s bottleneck, every flow at the
same RTT).

Points: per congestion control, number of flows and RTT, one cell of that many flows
paced at C_a = C / 10 (5 flows: half the link, no congestion; 12: C_g = 1.2), started
`--spacing` apart, measured over the same window after the last start.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.rtt_sweep.args import RttSweepArgs

if TYPE_CHECKING:
    from itb.study.registry import Say, Shown, Study
    from itb.study.rtt_sweep.cells import RttSweepCell
    from itb.study.rtt_sweep.results import Results
    from itb.sweep.sweep import Outcome, Sweep


class RttSweep:
    name = ("study", "rtt-sweep")
    kind = "rtt-sweep"
    rank = 30
    group_help = None  # `itb study` is the CLI's
    Args = RttSweepArgs
    help = """Goodput and fairness of long-lived flows against the RTT (RR-6244 §5.5.1).

    Per congestion control, flow count (5: no congestion; 12: C_g = 1.2) and RTT, one
    cell of flows paced at C_a = C / 10, every flow at that RTT, measured over the same
    window once all have started: the flows' mean goodput (as a share of C_a) and Jain's
    index of their goodputs, each the mean over repetitions ± its 95 % interval.
    Resumable like `itb bench` (docs/studies.md).
    """

    def plan(self, args: RttSweepArgs, out: Path, say: Say) -> Sweep[RttSweepCell]:
        from itb.study.rtt_sweep.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[RttSweepCell], args: RttSweepArgs) -> Results:
        from itb.study.rtt_sweep.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[Results], args: RttSweepArgs) -> list[Shown]:
        from itb.study.rtt_sweep.summary import tables

        return tables(outcome, args)


STUDY: Study[RttSweepArgs, Results, RttSweepCell] = RttSweep()
