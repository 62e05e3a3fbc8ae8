"""`itb study profile margin` (docs/profile.md): is the calibrated model's completion time
kept by a transfer along a constant profile, and how much margin does it need? (INRIA
RR-6874 §5.3, figures 11 and 12.)

One cell per (RTT, margin m): a one-pair dumbbell at C. Its one transfer asks for a
throughput of (1 − m)·C at the bottleneck: the model gives the input X to send at
(eq. 3) and the completion time of the volume (eq. 6); the volume is sized so that the
prediction is `--seconds`. Lateness = measured − predicted completion time, per
repetition; with it, the mean and largest 1 ms wire rate at the bottleneck and its drops.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.profile_margin.args import MarginArgs
from itb.study.pursuit import GROUP_HELP

if TYPE_CHECKING:
    from itb.study.profile_margin.cells import MarginCell
    from itb.study.profile_margin.results import MarginResults
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class Margin:
    name = ("study", "profile", "margin")
    kind = "profile-margin"
    rank = 10
    group_help = GROUP_HELP
    Args = MarginArgs
    help = """Lateness of one transfer along a constant profile against the margin m (RR-6874
    §5.3): it asks for (1 − m)·C at the bottleneck through the calibrated model, which
    also predicts its completion. Reports the margin from which the lateness stays below
    1 s and 0.5 s. The defaults (21 margins × 10 repetitions × 60 s) take about 4 hours.
    """

    def plan(self, args: MarginArgs, out: Path, say: Say) -> Sweep[MarginCell]:
        from itb.study.profile_margin.plan import plan

        return plan(args, out, say)

    def analyse(self, sweep: Sweep[MarginCell], args: MarginArgs) -> MarginResults:
        from itb.study.profile_margin.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[MarginResults], args: MarginArgs) -> list[Shown]:
        from itb.study.profile_margin.summary import tables

        return tables(outcome, args)


STUDY: Study[MarginArgs, MarginResults, MarginCell] = Margin()
