"""`itb study predictability` (INRIA RR-6256, docs/predictability.md): how the mean and
the spread of BU completion times depend on the congestion level C_g, the reverse
traffic level R and the start spacing, per protocol.

Points: for each protocol and reverse level, every C_g of the sweep with the usual
start spacing; and for each protocol, the synchronised case (spacing 0) at one C_g.
Each point is a BU cell on a K = 10 dumbbell (as the report's 1 Gbit/s nodes on a
10 Gbit/s bottleneck), scaled like the benchmark's classes.

The planner must not create the effects the study measures: every forward source
starts within `max_span` of one transfer's time (the spacing shrinks to fit), so a
perfectly fair protocol's T_mean stays on C_g·(transfer time) and its σ_T near 0; the
reverse sources start after the forward ones, with the same spacing (RR-6256 §4.3).
Each point carries what the ideal protocol (fluid max-min fair share, no slow start,
no loss) would give on its plan.

Results (`results`, computed in `analysis`): T_mean = a·C_g + b fitted per protocol and
reverse level against the realised C_g (correlation, R², slope against the ideal one;
quadratic for Scalable as the report does), CoV against C_g and R, the margins over
T_mean that cover 68 % and 95 % of completions, and σ_T synchronised vs spaced.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.predictability.args import PredictabilityArgs

if TYPE_CHECKING:
    from itb.study.predictability.cells import PredictabilityCell
    from itb.study.predictability.results import Results
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class Predictability:
    name = ("study", "predictability")
    kind = "predictability"
    rank = 10
    group_help = None  # `itb study` is the CLI's
    Args = PredictabilityArgs
    help = """How predictable are transfer times? Sweep C_g, R and start spacing per protocol.

    Every point is a BU cell (K = 10: the report's 1 Gbit/s nodes on a 10 Gbit/s
    bottleneck, scaled to this testbed). Fits T_mean = a·C_g + b per protocol and
    reverse level (correlation, R²), plots CoV against C_g and R, gives the margins over
    T_mean covering 68 % and 95 % of completions and σ_T for synchronised vs spaced
    starts. About 80 min with the defaults (28 runs of 90 s transfers); resumable
    like `itb bench` (docs/predictability.md).
    """

    def plan(self, args: PredictabilityArgs, out: Path, say: Say) -> Sweep[PredictabilityCell]:
        from itb.study.predictability.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[PredictabilityCell], args: PredictabilityArgs) -> Results:
        from itb.study.predictability.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[Results], args: PredictabilityArgs) -> list[Shown]:
        from itb.study.predictability.summary import tables

        return tables(outcome, args)


STUDY: Study[PredictabilityArgs, Results, PredictabilityCell] = Predictability()
