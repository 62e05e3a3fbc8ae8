"""`itb study streams` (docs/studies.md): parallel streams per node (the NXE paper:
R. Guillier, P. Vicat-Blanc Primet, "Methodologies and Tools for Exploring Transport
Protocols in the Context of High-speed Networks", §4.1, Table 4: 11 pairs of nodes, 1,
2, 5 or 10 BIC streams each, started 1 s apart; mean total goodput, flow mean and
Jain's index).

Points: per congestion control and streams per node, one cell of 11 nodes on a K = 10
dumbbell (C_g = 1.1), each node's streams sharing its C_a, measured over the same window
once all have started.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.streams.args import StreamsArgs

if TYPE_CHECKING:
    from itb.study.registry import Say, Shown, Study
    from itb.study.streams.cells import StreamsCell
    from itb.study.streams.results import Results
    from itb.sweep.sweep import Outcome, Sweep


class Streams:
    name = ("study", "streams")
    kind = "streams"
    rank = 33
    group_help = None  # `itb study` is the CLI's
    Args = StreamsArgs
    help = """Parallel streams per node against the link's goodput and fairness (NXE Table 4).

    Per congestion control and number of streams per node (--streams, default 1, 2, 5,
    10), one cell of --nodes nodes (11: C_g = 1.1 on a K = 10 dumbbell), each node's
    streams sharing its C_a = C/10, started --spacing apart and measured over the same
    window once all have started: the total goodput, the mean per stream and Jain's
    index of the nodes' goodputs. Resumable like `itb bench` (docs/studies.md).
    """

    def plan(self, args: StreamsArgs, out: Path, say: Say) -> Sweep[StreamsCell]:
        from itb.study.streams.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[StreamsCell], args: StreamsArgs) -> Results:
        from itb.study.streams.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[Results], args: StreamsArgs) -> list[Shown]:
        from itb.study.streams.summary import tables

        return tables(outcome, args)


STUDY: Study[StreamsArgs, Results, StreamsCell] = Streams()
