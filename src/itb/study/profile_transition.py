"""`itb study profile transition` (docs/profile.md): what a step from a low rate to a
high one costs each mechanism, in seconds, against RTT and step height (INRIA RR-6874
§6.2, figures 16 and 17).

One cell per (mechanism, RTT): a one-pair dumbbell at C whose timeline runs one transfer
per height of `--heights`, one after another, each a new connection that follows `--low`
for `--low-hold` seconds and then its height for `--hold` seconds (and a little more:
`profile_of`). A connection of its own per step, so that no step inherits the window an
earlier, higher one left (Linux keeps an application-limited window when
tcp_slow_start_after_idle is 0, as on ITB's hosts). The inputs are asked as they are (no
model). Each step is measured at the bottleneck (`itb.analysis.transition`) over a
window of 10 RTTs after its date (`window_s`): its cost, the largest deficit against the
sender's level, and when the deficit neared its peak (the sender settled). A step during which the link
emulator released a segment more than 1 ms late (short of CPU: its deficit is the
testbed's) is left out of the spreads and counted as failed there; every step stays in
`runs`. The level is the step's rate on the wire (rate × 1514/1448) for TCP,
which keeps it exactly, and UDT's own level, measured over the last `LEVEL_S` of the
step, since UDT runs a few % above the rate it is set to.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from itb.analysis import transition as tr_cost
from itb.analysis.fairshare import tcp_payload_share
from itb.analysis.pursuit_studies import TransitionPoint, TransitionResults, TransitionRun, spread
from itb.bench.sweep import Outcome, Sweep, SweepCell, drive
from itb.errors import ScenarioError
from itb.scenario import profile as profiles
from itb.scenario.units import format_rate
from itb.study.pursuit_setup import Mechanism, cell_logs, secs, testbed_doc

Say = Callable[[str], None]
LEVEL_S = 1.0  # UDT's level: its mean rate over the last second of the high step
WINDOW_MIN_S = 0.5
LEVEL_FROM = {"tcp": "the step's rate on the wire (× 1514/1448)",
              "udt": f"the sender's mean wire rate over the last {LEVEL_S:g} s of the step"}


@dataclass(frozen=True)
class TransitionArgs:
    mechanisms: tuple[Mechanism, ...]
    rtts_ms: tuple[float, ...]
    low_bps: int
    heights_bps: tuple[int, ...]
    hold_s: float  # each high step
    low_hold_s: float  # each low step
    repeat: int
    capacity_bps: int
    open_window: bool
    seed: int
    buffer: str | None = None  # the bottleneck's queue; None: one BDP

    def key(self) -> dict:
        return {"mechanisms": [m.name for m in self.mechanisms], "rtts_ms": list(self.rtts_ms),
                "low_bps": self.low_bps, "heights_bps": list(self.heights_bps),
                "hold_s": self.hold_s, "low_hold_s": self.low_hold_s, "repeat": self.repeat,
                "capacity_bps": self.capacity_bps, "open_window": self.open_window,
                "seed": self.seed, **({"buffer": self.buffer} if self.buffer else {})}


TAIL_SHARE = 0.1  # a transfer's volume over what its profile allows by the step's end


def profile_of(a: TransitionArgs, height: int) -> tuple[tuple[tuple[int, int], ...], int]:
    """One step's transfer: its profile (µs, bit/s) and volume. The volume is what the
    profile allows by the end of the high step plus TAIL_SHARE, so a sender that runs
    ahead of its profile (UDT) still sends through the whole step, and one that keeps it
    ends a little after."""
    if not a.low_bps < height <= a.capacity_bps:
        raise ScenarioError(None, "--heights", f"{format_rate(height)} is not between the low "
                                               f"rate {format_rate(a.low_bps)} and C")
    steps = ((0, a.low_bps), (round(a.low_hold_s * 1e6), height))
    end_us = round((a.low_hold_s + a.hold_s) * 1e6)
    return steps, math.floor(profiles.bits_by(steps, end_us) * (1 + TAIL_SHARE) / 8)


def cell_doc(a: TransitionArgs, mech: Mechanism, rtt_ms: float) -> dict:
    name = f"transition-{mech.name}-rtt{rtt_ms:g}"
    transfers, at = [], 0.0
    for k, h in enumerate(a.heights_bps):
        steps, volume = profile_of(a, h)
        transfers.append({"id": f"h{k + 1}", "src": "l1", "dst": "r1", "at": secs(at),
                          "volume": f"{volume}B", **mech.transfer_fields(),
                          "profile": [[t / 1e6, format_rate(r)] for t, r in steps]})
        at += 1.5 * profiles.time_to_send_us(steps, volume) / 1e6 + 1 + 5 * rtt_ms / 1000
    return {**testbed_doc(name, f"low → high steps, {mech.name}, RTT {rtt_ms:g} ms", 1,
                          a.capacity_bps, rtt_ms, a.open_window, a.buffer),
            "experiment": {"name": name, "repetitions": a.repeat, "seed": a.seed,
                           "duration": secs(math.ceil(at + 10)), "interval": "100ms"},
            "transfer": transfers}


def sweep_of(a: TransitionArgs, out: Path) -> Sweep:
    if not a.mechanisms or not a.rtts_ms or not a.heights_bps:
        raise ScenarioError(None, "--mechanisms" if not a.mechanisms else
                            "--rtt" if not a.rtts_ms else "--heights", "give at least one")
    cells = [SweepCell(f"{m.name}-rtt{rtt:g}ms", cell_doc(a, m, rtt),
                       {"mechanism": m.name, "protocol": m.protocol, "rtt_ms": rtt})
             for m in a.mechanisms for rtt in a.rtts_ms]
    return Sweep(out, "profile-transition", a.key(), cells, a.repeat, a.seed)


def window_s(hold_s: float, rtt_ms: float) -> float:
    """How long after the step's date its cost is taken: 10 RTTs (a window
    growing per RTT gets there in that time), at least WINDOW_MIN_S, at most the step."""
    return min(hold_s, max(WINDOW_MIN_S, 10 * rtt_ms / 1000))


def measure(rows, start_ns: int, a_args: dict, height: int, protocol: str, rtt_ms: float) -> dict:
    """Level, cost, settling time and the emulator's largest lag of one transfer's step."""
    t0 = start_ns + a_args["low_hold_s"] * 1e9
    end = t0 + a_args["hold_s"] * 1e9
    span = window_s(a_args["hold_s"], rtt_ms)
    if protocol == "udt":  # its last second, or the step's second half if shorter
        lvl = tr_cost.level(rows, end - min(LEVEL_S, a_args["hold_s"] / 2) * 1e9, end)
    else:
        lvl = height / tcp_payload_share(1500)
    out = {"level_bps": lvl, "cost_s": None, "settled_s": None, "window_s": span,
           "emulator_lag_us": tr_cost.emulator_lag_us(rows, t0, t0 + span * 1e9)}
    if lvl:
        out |= {"cost_s": tr_cost.cost(rows, t0, lvl, span),
                "settled_s": tr_cost.settled(rows, t0, lvl, span)}
    return out


def analyse(sweep: Sweep) -> TransitionResults:
    a = sweep.state["args"]
    runs, failed = [], 0
    for cell in sweep.state["cells"]:
        tr, fwd = cell_logs(sweep.out, cell)
        if tr is None or fwd is None:
            continue
        heights = {f"h{k + 1}": h for k, h in enumerate(a["heights_bps"])}
        for row in tr[tr["transfer"].isin(list(heights))].itertuples():
            h = heights[row.transfer]
            m = {"level_bps": None, "cost_s": None, "settled_s": None, "window_s": 0.0}
            if math.isfinite(row.start_ns):  # measured also when it failed later: kept, not used
                rows = fwd[fwd["repetition"] == row.repetition]
                m = measure(rows, int(row.start_ns), a, h, cell["protocol"], cell["rtt_ms"])
            failed += not row.ok
            runs.append(TransitionRun(mechanism=cell["mechanism"], rtt_ms=cell["rtt_ms"],
                                      repetition=int(row.repetition), low_bps=a["low_bps"],
                                      high_bps=h, ok=bool(row.ok), **m))
    points = []
    for (mech, rtt, h) in dict.fromkeys((r.mechanism, r.rtt_ms, r.high_bps) for r in runs):
        mine = [r for r in runs if (r.mechanism, r.rtt_ms, r.high_bps) == (mech, rtt, h)]
        # a failed transfer, or one with no level or cost, counts as failed; one the
        # emulator disturbed as disturbed; neither enters the mean
        usable = [r for r in mine if r.ok and r.cost_s is not None]
        kept = [r for r in usable if not r.disturbed]
        points.append(TransitionPoint(
            mechanism=mech, rtt_ms=rtt, low_bps=a["low_bps"], high_bps=h,
            failed=len(mine) - len(usable), disturbed=len(usable) - len(kept),
            cost=spread((r.cost_s for r in kept), failed=len(mine) - len(kept)),
            settled=spread((r.settled_s for r in kept), failed=len(mine) - len(kept))))
    points.sort(key=lambda p: (p.mechanism, p.rtt_ms, p.high_bps))
    res = TransitionResults(capacity_bps=a["capacity_bps"], open_window=a["open_window"],
                            hold_s=a["hold_s"], level_from="; ".join(f"{k}: {v}" for k, v in
                                                                      LEVEL_FROM.items()),
                            window=f"10 RTTs after the step's date, at least {WINDOW_MIN_S:g} s, "
                                   f"at most the step ({a['hold_s']:g} s)",
                            points=points, runs=runs, failed=failed)
    res.save(sweep.out / "results.json")
    return res


def run_transition(a: TransitionArgs, out: Path, say: Say = print,
                   tick: Say = lambda s: None) -> Outcome[TransitionResults]:
    from itb.report.build import analyse_run
    from itb.report.profile_studies import build_transition_report

    return drive(sweep_of(a, out), analyse,
                 lambda sw, res: build_transition_report(out, sw.state, res), say, tick,
                 analyse_run)
