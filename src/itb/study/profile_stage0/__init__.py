"""`itb study profile stage0` (docs/profile.md): the preliminary experiments of INRIA
RR-6874 §3.2 and §4, which make sure the hosts are not the bottleneck.

- cpu: the CPU the sending and the receiving process use per input rate, for each
  mechanism and RTT (ITB's endpoints: flow for TCP, itb-udt for UDT; getrusage of each
  process, in % of one core over the transfer);
- files: GridFTP memory to memory (/dev/zero → /dev/null), disk to memory and disk to
  disk (a file of the study's written for it, its pages evicted from the page cache
  before each repetition, to a file), at full speed;
- streams: GridFTP memory to memory with 1, 2, 5, 10 parallel streams (`-p`) for each
  TCP congestion control (nocc paced at 90 % of C), and UDT (one stream) at 90 % of C.

GridFTP runs as the documents ran it, an anonymous server and globus-url-copy, here
pulling from the server on l1 to r1; the server's connections get the congestion
control through ITB's pacer (`cc` of its [[command]]). Its goodput is the volume over
the client's run (from its start, so with GridFTP's login and set-up).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.profile_stage0.args import Stage0Args
from itb.study.pursuit import GROUP_HELP

if TYPE_CHECKING:
    from itb.study.profile_stage0.cells import Stage0Cell
    from itb.study.profile_stage0.results import Stage0Results
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class Stage0:
    name = ("study", "profile", "stage0")
    kind = "profile-stage0"
    rank = 40
    group_help = GROUP_HELP
    Args = Stage0Args
    help = """The preliminary experiments (RR-6874 §4): the endpoints' CPU per input rate for TCP
    and UDT, GridFTP memory to memory against disk to memory and disk to disk, and the
    goodput with 1 to 10 parallel streams. Needs GridFTP for the files and streams parts
    (`make setup` installs it). The defaults take about 25 minutes.
    """

    def plan(self, args: Stage0Args, out: Path, say: Say) -> Sweep[Stage0Cell]:
        from itb.study.profile_stage0.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[Stage0Cell], args: Stage0Args) -> Stage0Results:
        from itb.study.profile_stage0.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[Stage0Results], args: Stage0Args) -> list[Shown]:
        from itb.study.profile_stage0.summary import tables

        return tables(outcome, args)


STUDY: Study[Stage0Args, Stage0Results, Stage0Cell] = Stage0()
