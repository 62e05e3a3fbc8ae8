"""`itb profile calibrate` (docs/profile.md): the input → goodput / throughput model of
one pursuit mechanism on this testbed (INRIA RR-6874 §3.3.2 and §5).

One cell per RTT: a one-pair dumbbell at the testbed's capacity whose timeline sends one
transfer per input rate X, one after another, each a constant one-step profile sized to
last about `--seconds` at X, with the mechanism's congestion control and enforcement.
Each transfer gives a sample: goodput (volume / completion time), the mean and largest
1 ms wire rate at the bottleneck while it ran. The model (itb.analysis.profile_model)
is fitted over the inputs up to `--linear-max` of C and saved with the results and as
runs/profile-model-<mechanism>.json, where `itb profile predict` finds it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.profile_calibration.args import CalibrationArgs

if TYPE_CHECKING:
    from itb.study.profile_calibration.cells import CalibrationCell
    from itb.study.profile_calibration.results import CalibrationResults
    from itb.study.registry import Say, Shown, Study
    from itb.sweep.sweep import Outcome, Sweep


class Calibration:
    name = ("profile", "calibrate")
    kind = "profile-calibration"
    rank = 10
    group_help = None  # `itb profile` is the CLI's
    Args = CalibrationArgs
    help = """Measure what a pursuit mechanism delivers for each input rate and RTT, and fit the
    model that predicts it.

    Per RTT, one transfer per input rate, one after another, each a constant profile;
    goodput (volume / time) and the bottleneck's mean and largest 1 ms throughput; then
    goodput = a_g·X + b_g and throughput = a_t·X + b_t per RTT, each coefficient linear in
    RTT (INRIA RR-6874 §5). The defaults (3 RTTs × 10 inputs × 8 s) take about 20 min.
    The model goes to runs/profile-model-<cc>-<enforce>.json (runs/profile-model-udt.json
    for UDT) for `itb profile predict`.
    """

    def plan(self, args: CalibrationArgs, out: Path, say: Say) -> Sweep[CalibrationCell]:
        from itb.study.profile_calibration.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[CalibrationCell], args: CalibrationArgs) -> CalibrationResults:
        from itb.study.profile_calibration.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[CalibrationResults], args: CalibrationArgs) -> list[Shown]:
        from itb.study.profile_calibration.summary import tables

        return tables(outcome, args)


STUDY: Study[CalibrationArgs, CalibrationResults, CalibrationCell] = Calibration()
