"""`itb study incremental` (docs/studies.md): long-lived flows added one at a time,
a fixed period apart, until twelve share the bottleneck (INRIA RR-6244 §5.5.1, Figure
7: a flow every 200 s, 11 and 100 ms RTT, the aggregate throughput after the 10 Gbit/s
bottleneck stepping up as the congestion level grows).

Points: per congestion control and RTT, one cell whose flow k starts at k × period, each
paced at C_a = C / 10, measured per step (the second half of each period): the link's
utilisation by the flows against the fair ideal min(k · C_a, C) / C, and Jain's index of
the active flows' goodputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.incremental.args import IncrementalArgs

if TYPE_CHECKING:
    from itb.study.incremental.cells import IncrementalCell
    from itb.study.incremental.results import Results
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class Incremental:
    name = ("study", "incremental")
    kind = "incremental"
    rank = 31
    group_help = None  # `itb study` is the CLI's
    Args = IncrementalArgs
    help = """Flows added one at a time until twelve share the bottleneck (RR-6244 §5.5.1).

    Per congestion control and RTT, one cell whose k-th flow starts at k × --period, each
    paced at C_a = C / 10. Per step (k flows active; its second half measured): the
    utilisation of the link by the flows against the fair ideal min(k·C_a, C)/C, and
    Jain's index of the active flows' goodputs; the report draws the bottleneck's
    throughput over time, one panel per protocol and RTT (the document's Figure 7).
    Resumable like `itb bench` (docs/studies.md).
    """

    def plan(self, args: IncrementalArgs, out: Path, say: Say) -> Sweep[IncrementalCell]:
        from itb.study.incremental.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[IncrementalCell], args: IncrementalArgs) -> Results:
        from itb.study.incremental.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[Results], args: IncrementalArgs) -> list[Shown]:
        from itb.study.incremental.summary import tables

        return tables(outcome, args)


STUDY: Study[IncrementalArgs, Results, IncrementalCell] = Incremental()
