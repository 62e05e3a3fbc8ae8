"""`itb study profile transition` (docs/profile.md): what a step from a low rate to a
high one costs each mechanism, in seconds, against RTT and step height (INRIA RR-6874
§6.2, figures 16 and 17).

One cell per (mechanism, RTT): a one-pair dumbbell at C whose timeline runs one transfer
per height of `--heights`, one after another, each a new connection that follows `--low`
for `--low-hold` seconds and then its height for `--hold` seconds (and a little more:
`profile_of`). A connection of its own per step, so that no step inherits the window an
earlier, higher one left (Linux keeps an application-limited window when
tcp_slow_start_after_idle is 0, as on ITB's hosts). The inputs are asked as they are (no
model). Each step is measured at the bottleneck (`cost`) over a window of 10 RTTs after
its date (`analysis.window_s`): its cost, the largest deficit against the sender's level,
and when the deficit neared its peak (the sender settled). A step during which the link
emulator released a segment more than 1 ms late (short of CPU: its deficit is the
testbed's) is left out of the spreads and counted as failed there; every step stays in
`runs`. The level is the step's rate on the wire (rate × 1514/1448) for TCP,
which keeps it exactly, and UDT's own level, measured over the last `LEVEL_S` of the
step, since UDT runs a few % above the rate it is set to.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.profile_transition.args import TransitionArgs
from itb.study.pursuit import GROUP_HELP

if TYPE_CHECKING:
    from itb.study.profile_transition.cells import TransitionCell
    from itb.study.profile_transition.results import TransitionResults
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class Transition:
    name = ("study", "profile", "transition")
    kind = "profile-transition"
    rank = 30
    group_help = GROUP_HELP
    Args = TransitionArgs
    help = """The cost of a low → high step in seconds of the high rate, against RTT and step
    height, for each mechanism (RR-6874 §6.2, figure 17): paced TCP without congestion
    control, UDT, and Reno held by an application cap. No model is needed: the inputs are
    asked as they are. The defaults (3 mechanisms × 2 RTTs × 3 repetitions of a 75 s
    timeline, one transfer per height) take about 25 minutes.
    """

    def plan(self, args: TransitionArgs, out: Path, say: Say) -> Sweep[TransitionCell]:
        from itb.study.profile_transition.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[TransitionCell], args: TransitionArgs) -> TransitionResults:
        from itb.study.profile_transition.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[TransitionResults], args: TransitionArgs) -> list[Shown]:
        from itb.study.profile_transition.summary import tables

        return tables(outcome, args)


STUDY: Study[TransitionArgs, TransitionResults, TransitionCell] = Transition()
