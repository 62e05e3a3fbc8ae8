"""`itb study pacing-vs-tbf` (docs/studies.md): a source's rate kept by a token
bucket on its host or by pacing, with BIC and Reno, one flow, two flows from one host and
two flows from two hosts (eWAN: Vicat-Blanc Primet et al., "Large Scale Gigabit Emulated
Testbed for Grid Transport Evaluation", PFLDnet 2006, §V.B, Figures 8–10: on a 700
Mbit/s bottleneck at 100 ms with sources limited to 490 Mbit/s, "the token bucket
rate limitation approach seems to be very penalizing in very large bandwidth-delay
product environments"; PSPacer's pacing "performs much better").

Points: per congestion control, RTT, socket buffer, pattern and mechanism, one cell of
transfers of the same volume started together, each source host limited to R in all.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.pacing_tbf.args import PacingTbfArgs

if TYPE_CHECKING:
    from itb.study.pacing_tbf.cells import PacingTbfCell
    from itb.study.pacing_tbf.results import Results
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class PacingTbf:
    name = ("study", "pacing-vs-tbf")
    kind = "pacing-vs-tbf"
    rank = 32
    group_help = None  # `itb study` is the CLI's
    Args = PacingTbfArgs
    help = """Token bucket against pacing as a source's rate limit (eWAN, PFLDnet 2006, §V.B).

    Per congestion control (BIC, Reno), RTT, socket buffer and pattern (1 flow; 2 flows
    from one host; 2 flows from two hosts), transfers of one volume started together,
    each source host limited to --limit in all, either by a token bucket on its egress
    (Linux tbf, unpaced senders) or by the senders' pacing. Reports each cell's mean
    completion time against the fair ideal, Jain's index of the flows' throughputs, and
    the token bucket against pacing (Fieller's interval, Holm's steps over the study).
    Resumable like `itb bench` (docs/studies.md).
    """

    def plan(self, args: PacingTbfArgs, out: Path, say: Say) -> Sweep[PacingTbfCell]:
        from itb.study.pacing_tbf.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[PacingTbfCell], args: PacingTbfArgs) -> Results:
        from itb.study.pacing_tbf.analysis import analyse

        return analyse(sweep)

    def conclude(self, outcome: Outcome[Results], args: PacingTbfArgs) -> list[Shown]:
        from itb.study.pacing_tbf.summary import tables

        return tables(outcome, args)


STUDY: Study[PacingTbfArgs, Results, PacingTbfCell] = PacingTbf()
