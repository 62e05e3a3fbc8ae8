"""`itb study profile pair` (docs/profile.md): two complementary step profiles sharing
one bottleneck (INRIA RR-6874 §3.4 and §6.1, figures 3, 14 and 15).

With C' = (1 − m)·C, flow A asks for 0.25·C', then 0.75·C', then 0.5·C' of throughput
at the bottleneck, and flow B for 0.75·C', 0.25·C', 0.5·C', each step a third of
`--seconds`: together they ask for C' at every moment and both should end on the
common last step. Each flow's input profile comes from its mechanism's model (eq. 3),
its volume is what the model's goodputs (eq. 6) deliver in `--seconds`, and its
lateness is measured − predicted completion. One cell per (pair of mechanisms, margin);
both flows start at the same date (ITB's dispatch error is recorded: well under 1 ms).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.profile_pair.args import PairArgs
from itb.study.pursuit import GROUP_HELP

if TYPE_CHECKING:
    from itb.study.profile_pair.cells import PairCell
    from itb.study.profile_pair.results import PairResults
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class Pair:
    name = ("study", "profile", "pair")
    kind = "profile-pair"
    rank = 20
    group_help = GROUP_HELP
    Args = PairArgs
    help = """Two complementary step profiles sharing the bottleneck at (1 − m)·C (RR-6874
    §6.1, figures 14 and 15): each flow's lateness against the margin, for each pair of
    mechanisms. Uses each mechanism's model (runs/profile-model-*.json). The defaults
    (3 pairs × 8 margins × 5 repetitions × 60 s) take about 2 hours.
    """

    def plan(self, args: PairArgs, out: Path, say: Say) -> Sweep[PairCell]:
        from itb.study.profile_pair.plan import plan

        return plan(args, out, say)

    def analyse(self, sweep: Sweep[PairCell], args: PairArgs) -> PairResults:
        from itb.study.profile_pair.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[PairResults], args: PairArgs) -> list[Shown]:
        from itb.study.profile_pair.summary import tables

        return tables(outcome, args)


STUDY: Study[PairArgs, PairResults, PairCell] = Pair()
