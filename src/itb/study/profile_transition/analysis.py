"""The analysis of `itb study profile transition`: each step measured at the bottleneck
(`cost`) over a window of 10 RTTs after its date, then per mechanism, RTT and height the
spread of the costs (a step the emulator disturbed left out and counted)."""

from __future__ import annotations

import math

from itb.analysis.fairshare import tcp_payload_share
from itb.analysis.pursuit import cell_logs, spread
from itb.study.profile_transition import cost as tr_cost
from itb.study.profile_transition.args import TransitionArgs
from itb.study.profile_transition.cells import TransitionCell
from itb.study.profile_transition.results import TransitionPoint, TransitionResults, TransitionRun
from itb.sweep.sweep import Sweep

LEVEL_S = 1.0  # UDT's level: its mean rate over the last second of the high step
WINDOW_MIN_S = 0.5
LEVEL_FROM = {
    "tcp": "the step's rate on the wire (× 1514/1448)",
    "udt": f"the sender's mean wire rate over the last {LEVEL_S:g} s of the step",
}


def window_s(hold_s: float, rtt_ms: float) -> float:
    """How long after the step's date its cost is taken: 10 RTTs (a window
    growing per RTT gets there in that time), at least WINDOW_MIN_S, at most the step."""
    return min(hold_s, max(WINDOW_MIN_S, 10 * rtt_ms / 1000))


def measure(
    rows, start_ns: int, a: TransitionArgs, height: int, protocol: str, rtt_ms: float
) -> dict:
    """Level, cost, settling time and the emulator's largest lag of one transfer's step."""
    t0 = start_ns + a.low_hold_s * 1e9
    end = t0 + a.hold_s * 1e9
    span = window_s(a.hold_s, rtt_ms)
    if protocol == "udt":  # its last second, or the step's second half if shorter
        lvl = tr_cost.level(rows, end - min(LEVEL_S, a.hold_s / 2) * 1e9, end)
    else:
        lvl = height / tcp_payload_share(1500)
    out = {
        "level_bps": lvl,
        "cost_s": None,
        "settled_s": None,
        "window_s": span,
        "emulator_lag_us": tr_cost.emulator_lag_us(rows, t0, t0 + span * 1e9),
    }
    if lvl:
        out |= {
            "cost_s": tr_cost.cost(rows, t0, lvl, span),
            "settled_s": tr_cost.settled(rows, t0, lvl, span),
        }
    return out


def analyse(sweep: Sweep[TransitionCell], a: TransitionArgs) -> TransitionResults:
    runs, failed = [], 0
    for cell in sweep.index.cells:
        tr, fwd = cell_logs(sweep.out, cell)
        if tr is None or fwd is None:
            continue
        heights = {f"h{k + 1}": h for k, h in enumerate(a.heights_bps)}
        for row in tr[tr["transfer"].isin(list(heights))].itertuples():
            h = heights[row.transfer]
            m = {"level_bps": None, "cost_s": None, "settled_s": None, "window_s": 0.0}
            if math.isfinite(row.start_ns):  # measured also when it failed later: kept, not used
                rows = fwd[fwd["repetition"] == row.repetition]
                m = measure(rows, int(row.start_ns), a, h, cell.protocol, cell.rtt_ms)
            failed += not row.ok
            runs.append(
                TransitionRun(
                    mechanism=cell.mechanism,
                    rtt_ms=cell.rtt_ms,
                    repetition=int(row.repetition),
                    low_bps=a.low_bps,
                    high_bps=h,
                    ok=bool(row.ok),
                    **m,
                )
            )
    points = []
    for mech, rtt, high in dict.fromkeys((r.mechanism, r.rtt_ms, r.high_bps) for r in runs):
        mine = [r for r in runs if (r.mechanism, r.rtt_ms, r.high_bps) == (mech, rtt, high)]
        # a failed transfer, or one with no level or cost, counts as failed; one the
        # emulator disturbed as disturbed; neither enters the mean
        usable = [r for r in mine if r.ok and r.cost_s is not None]
        kept = [r for r in usable if not r.disturbed]
        points.append(
            TransitionPoint(
                mechanism=mech,
                rtt_ms=rtt,
                low_bps=a.low_bps,
                high_bps=high,
                failed=len(mine) - len(usable),
                disturbed=len(usable) - len(kept),
                cost=spread((r.cost_s for r in kept), failed=len(mine) - len(kept)),
                settled=spread((r.settled_s for r in kept), failed=len(mine) - len(kept)),
            )
        )
    points.sort(key=lambda p: (p.mechanism, p.rtt_ms, p.high_bps))
    res = TransitionResults(
        capacity_bps=a.capacity_bps,
        open_window=a.open_window,
        hold_s=a.hold_s,
        level_from="; ".join(f"{k}: {v}" for k, v in LEVEL_FROM.items()),
        window=f"10 RTTs after the step's date, at least {WINDOW_MIN_S:g} s, "
        f"at most the step ({a.hold_s:g} s)",
        points=points,
        runs=runs,
        failed=failed,
    )
    res.save(sweep.out / "results.json")
    return res
