"""`itb study crossval` (docs/simulation.md): the same scenarios on the testbed and in
ns-3 (itb-sim, Linux's own congestion-control code), with the same seeded start jitter,
and every measure compared: where the two disagree beyond the bounds, with the likely
cause."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.crossval.args import CrossvalArgs

if TYPE_CHECKING:
    from itb.study.crossval.cells import CrossvalCell
    from itb.study.crossval.results import Results
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class Crossval:
    name = ("study", "crossval")
    kind = "crossval"
    rank = 45
    group_help = None
    Args = CrossvalArgs
    help = """Emulation against simulation on the same scenarios (docs/simulation.md).

    Per congestion control: one long flow (its steady goodput), one transfer (its
    completion time and first loss), and --sources transfers at once per --cg (T_mean, CoV,
    Jain), each run --repeat times on the testbed and in ns-3 (Linux's own algorithm), every
    transfer started up to --jitter later per repetition. With --grid space, instead,
    cells spread over the space the studies use (queues 0.1–2 BDP, RTT 10–200 ms, 1–12
    flows together or staggered, paced by access links or rate caps). Prints every
    measure side by side with the bound it is held to, inclusive (goodput ±2 %, single T
    ±5 %, T_mean ±10 % by an equivalence test, Jain ±0.05, CoV ratio in [0.5, 2]) and the
    protocols' ranking on each side; a disagreement names its likely cause. Resumable
    like `itb bench`.
    """

    def plan(self, args: CrossvalArgs, out: Path, say: Say) -> Sweep[CrossvalCell]:
        from itb.study.crossval.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[CrossvalCell], args: CrossvalArgs) -> Results:
        from itb.study.crossval.analysis import analyse

        return analyse(sweep, args.capacity_bps, args.rtt_ms)

    def conclude(self, outcome: Outcome[Results], args: CrossvalArgs) -> list[Shown]:
        from itb.study.crossval.summary import tables

        return tables(outcome, args)


STUDY: Study[CrossvalArgs, Results, CrossvalCell] = Crossval()
