"""`itb study friendliness` (docs/friendliness.md): inter-protocol fairness measured by
completion times (INRIA RR-6244 §4.2.3).

Points: for each tested protocol and congestion level, a BU cell on a K = 10 dumbbell
(the predictability study's plan: starts within a small span, so the plan adds no
effect) whose forward sources alternate between the tested protocol and the reference
TCP, tested first (bu.1, bu.3, ... tested; bu.2, bu.4, ... reference), so neither group
starts ahead; and, once per congestion level, the same cell with every source on the
reference: the reference's T without the tested protocol.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.friendliness.args import FriendlinessArgs

if TYPE_CHECKING:
    from itb.study.friendliness.cells import FriendlinessCell
    from itb.study.friendliness.results import Results
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class Friendliness:
    name = ("study", "friendliness")
    kind = "friendliness"
    rank = 20
    group_help = None  # `itb study` is the CLI's
    Args = FriendlinessArgs
    help = """Inter-protocol fairness: each group's completion time when the tested protocol and
    a reference TCP share the bottleneck.

    Per tested protocol and C_g, a BU cell on a K = 10 dumbbell whose sources alternate
    between the tested protocol and the reference, plus one cell per C_g with every
    source on the reference. Reports each group's T, the ratio T_reference / T_tested
    and whether the reference is slower next to the tested protocol than alone (Fieller's
    interval, Holm's steps over all points, ±2 % margin). Resumable like `itb bench` (docs/friendliness.md).
    """

    def plan(self, args: FriendlinessArgs, out: Path, say: Say) -> Sweep[FriendlinessCell]:
        from itb.study.friendliness.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[FriendlinessCell], args: FriendlinessArgs) -> Results:
        from itb.study.friendliness.analysis import analyse

        return analyse(sweep)

    def conclude(self, outcome: Outcome[Results], args: FriendlinessArgs) -> list[Shown]:
        from itb.study.friendliness.summary import tables

        return tables(outcome, args)


STUDY: Study[FriendlinessArgs, Results, FriendlinessCell] = Friendliness()
