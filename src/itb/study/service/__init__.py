"""`itb study service` (docs/service.md): the scheduled transfer service of eWAN
(Vicat-Blanc Primet et al., "Large Scale Gigabit Emulated Testbed for Grid Transport
Evaluation", PFLDnet 2006, §V) on the testbed. Each workload's requests are planned by each
policy (ITB's exact planner, TS2, EDF, ALAP: plans kept by TCP without congestion
control, paced) or started at once (TS1: each congestion control sharing the link), and
every transfer's finish is measured against its deadline and its plan.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.service.args import ServiceArgs

if TYPE_CHECKING:
    from itb.study.registry import Say, Shown, Study
    from itb.study.service.cells import ServiceCell
    from itb.study.service.results import Results
    from itb.sweep.sweep import Outcome, Sweep


class Service:
    name = ("study", "service")
    kind = "service"
    rank = 40
    group_help = None
    Args = ServiceArgs
    help = """The scheduled transfer service on the testbed (eWAN, PFLDnet 2006, §V; docs/service.md).

    Requests (volume, release, deadline, max-rate) on one access link: the paper's example
    made feasible (two 3.4 GB requests in 60 s) and a seeded random workload. Planned
    policies (ITB's exact planner by default) run their plans with TCP without congestion
    control, paced, each plan's deadline --guard-rtts RTTs early; TS1 starts every request
    at its release with each --cc. Reports deadline misses, lateness against the deadline
    and the plan, f1, f2, and the margin TS1 would have needed. Resumable like `itb bench`.
    """

    def plan(self, args: ServiceArgs, out: Path, say: Say) -> Sweep[ServiceCell]:
        from itb.study.service.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[ServiceCell], args: ServiceArgs) -> Results:
        from itb.study.service.analysis import analyse

        return analyse(sweep)

    def conclude(self, outcome: Outcome[Results], args: ServiceArgs) -> list[Shown]:
        from itb.study.service.summary import tables

        return tables(outcome, args)


STUDY: Study[ServiceArgs, Results, ServiceCell] = Service()
