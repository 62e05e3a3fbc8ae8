"""`itb study response-function` (docs/cc.md): does each congestion control respond to
random loss as its publication says?

One flow per point through the emulated bottleneck, with Bernoulli loss p on the data
direction only, a fixed RTT and a link far faster than the flow (the loss, not the
link, sets the rate). The loss range of each algorithm is planned from its published
response function so that the average window spans the range where the formula
holds (above the low-window regime, below what one emulated path carries).

Per point: the steady-state goodput after a warm-up, as a window w = R·RTT/MSS (the
rate in MSS per RTT); the loss rate the emulator applied to the flow over the same
span (the fit's p: a few dozen seeded draws can be 30 % off the configured p); every
congestion event's decrease β = 1 − cwnd_after / cwnd_before from the sender's
tcp_info samples (cwnd before entering Recovery, cwnd once back in Open). Per
algorithm: the fit log w = log c − d·log p, compared with the published c and d, and
the median β against the published decrease. The result models are in
`results`, the fit in `fit`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.response_function.args import ResponseArgs

if TYPE_CHECKING:
    from itb.study.registry import Say, Shown, Study
    from itb.study.response_function.cells import ResponseCell
    from itb.study.response_function.results import Results
    from itb.sweep.sweep import Outcome, Sweep


class ResponseFunction:
    name = ("study", "response-function")
    kind = "response-function"
    rank = 30
    group_help = None  # `itb study` is the CLI's
    Args = ResponseArgs
    help = """Check each congestion control against its published response function.

    One flow per point with random loss p (data direction only) at a fixed RTT on a
    link that is not the limit. The loss range of each algorithm is planned from its
    published w = c/p^d, over the windows where Linux's implementation follows that
    slope (BIC: 5000-12000 segments at 200 ms; HighSpeed: 800-3300 at 100 ms; Scalable:
    120-431 at 20 ms; see docs/cc.md). Fits log w = log c − d·log p and compares d with
    the publications (Reno 0.5, BIC 0.5, HighSpeed 0.835, Scalable 1.0; within ±0.08),
    and measures each congestion event's decrease β from the tcp_info samples against
    Linux's (within ±0.03). About 75 min with the defaults (30 points); resumable.
    """

    def plan(self, args: ResponseArgs, out: Path, say: Say) -> Sweep[ResponseCell]:
        from itb.study.response_function.plan import sweep_of

        return sweep_of(args, out)

    def analyse(self, sweep: Sweep[ResponseCell], args: ResponseArgs) -> Results:
        from itb.study.response_function.analysis import analyse

        return analyse(sweep, args)

    def conclude(self, outcome: Outcome[Results], args: ResponseArgs) -> list[Shown]:
        from itb.study.response_function.summary import tables

        return tables(outcome, args)


STUDY: Study[ResponseArgs, Results, ResponseCell] = ResponseFunction()
