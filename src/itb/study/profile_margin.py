"""`itb study profile margin` (docs/profile.md): is the calibrated model's completion time
kept by a transfer along a constant profile, and how much margin does it need? (INRIA
RR-6874 §5.3, figures 11 and 12.)

One cell per (RTT, margin m): a one-pair dumbbell at C. Its one transfer asks for a
throughput of (1 − m)·C at the bottleneck: the model gives the input X to send at
(eq. 3) and the completion time of the volume (eq. 6); the volume is sized so that the
prediction is `--seconds`. Lateness = measured − predicted completion time, per
repetition; with it, the mean and largest 1 ms wire rate at the bottleneck and its drops.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from itb.analysis.profile_model import Model
from itb.analysis.pursuit_studies import (
    LATENESS_LIMITS_S,
    MarginPoint,
    MarginResults,
    MarginThreshold,
    burst_of,
    margin_needed,
    pooled_burst,
    spread,
)
from itb.bench.sweep import Outcome, Sweep, SweepCell, drive
from itb.errors import ScenarioError
from itb.scenario.units import format_rate
from itb.study.pursuit_setup import (
    Mechanism,
    asked_input,
    cell_logs,
    extrapolation_warning,
    file_digest,
    lateness_values,
    secs,
    testbed_doc,
)

Say = Callable[[str], None]


@dataclass(frozen=True)
class MarginArgs:
    mechanism: Mechanism
    rtts_ms: tuple[float, ...]
    margins: tuple[float, ...]  # shares of C, e.g. 0.025
    seconds: float  # each transfer's predicted completion time
    repeat: int
    capacity_bps: int
    open_window: bool
    seed: int
    model_path: Path
    buffer: str | None = None  # the bottleneck's queue; None: one BDP

    def key(self, model_digest: str) -> dict:
        return {"mechanism": self.mechanism.name, "rtts_ms": list(self.rtts_ms),
                "margins": list(self.margins), "seconds": self.seconds, "repeat": self.repeat,
                "capacity_bps": self.capacity_bps, "open_window": self.open_window,
                "seed": self.seed, "model": model_digest,
                **({"buffer": self.buffer} if self.buffer else {})}


def plan_point(model: Model, capacity_bps: int, margin: float, rtt_ms: float,
               seconds: float) -> dict:
    """What one cell asks for and what the model predicts."""
    if not 0 <= margin < 1:
        raise ScenarioError(None, "--margins", f"{margin:g} is not a share of C in [0, 1)")
    target = (1 - margin) * capacity_bps
    x, beyond = asked_input(model, target, rtt_ms, capacity_bps, f"margin {margin * 100:g} %")
    good = model.goodput_for_throughput(target, rtt_ms)
    volume = max(1, round(good * seconds / 8))
    steps = ((0, round(target)),)
    return {"rtt_ms": rtt_ms, "margin": margin, "target_bps": target, "input_bps": round(x),
            "volume": volume, "predicted_s": model.completion_s(steps, volume, rtt_ms),
            "extrapolated": beyond}


def cell_doc(a: MarginArgs, p: dict) -> dict:
    name = f"margin-{a.mechanism.name}-rtt{p['rtt_ms']:g}-m{p['margin'] * 100:g}"
    return {**testbed_doc(name, f"constant profile at (1 - {p['margin']:g})·C, "
                                f"{a.mechanism.name}, RTT {p['rtt_ms']:g} ms", 1,
                          a.capacity_bps, p["rtt_ms"], a.open_window, a.buffer),
            "experiment": {"name": name, "repetitions": a.repeat, "seed": a.seed,
                           "duration": secs(math.ceil(1.5 * p["predicted_s"] + 10)),
                           "interval": "100ms"},
            "transfer": [{"id": "m", "src": "l1", "dst": "r1", "volume": f"{p['volume']}B",
                          **a.mechanism.transfer_fields(),
                          "profile": [[0, format_rate(p["input_bps"])]]}]}


def sweep_of(a: MarginArgs, model: Model, out: Path) -> Sweep:
    if not a.rtts_ms or not a.margins:
        raise ScenarioError(None, "--rtt" if not a.rtts_ms else "--margins", "give at least one")
    cells = []
    for rtt in a.rtts_ms:
        for m in a.margins:
            p = plan_point(model, a.capacity_bps, m, rtt, a.seconds)
            cells.append(SweepCell(f"rtt{rtt:g}ms-m{m * 100:g}", cell_doc(a, p), p))
    return Sweep(out, "profile-margin", a.key(file_digest(a.model_path)), cells, a.repeat, a.seed)


def analyse(sweep: Sweep) -> MarginResults:
    a = sweep.state["args"]
    points = []
    for cell in sweep.state["cells"]:
        tr, fwd = cell_logs(sweep.out, cell)
        late, failed, bursts = [], 0, []
        if tr is not None:
            mine = tr[tr["transfer"] == "m"]
            late, failed = lateness_values(mine, cell["predicted_s"])
            for row in mine[mine["ok"].astype(bool)].itertuples() if fwd is not None else ():
                bursts.append(burst_of(fwd[fwd["repetition"] == row.repetition],
                                       row.start_ns, row.end_ns))
        points.append(MarginPoint(rtt_ms=cell["rtt_ms"], margin=cell["margin"],
                                  target_bps=cell["target_bps"], input_bps=cell["input_bps"],
                                  volume=cell["volume"], predicted_s=cell["predicted_s"],
                                  lateness=spread(late, failed), burst=pooled_burst(bursts)))
    points.sort(key=lambda p: (p.rtt_ms, p.margin))
    thresholds = [MarginThreshold(rtt_ms=rtt, limit_s=lim, margin=margin_needed(
        [(p.margin, p.lateness) for p in points if p.rtt_ms == rtt], lim))
        for rtt in sorted({p.rtt_ms for p in points}) for lim in LATENESS_LIMITS_S]
    res = MarginResults(mechanism=a["mechanism"], capacity_bps=a["capacity_bps"],
                        seconds=a["seconds"], open_window=a["open_window"], points=points,
                        thresholds=thresholds)
    res.save(sweep.out / "results.json")
    return res


def run_margin(a: MarginArgs, out: Path, say: Say = print,
               tick: Say = lambda s: None) -> Outcome[MarginResults]:
    from itb.report.build import analyse_run
    from itb.report.profile_studies import build_margin_report

    model = Model.load(a.model_path)
    sweep = sweep_of(a, model, out)
    warning = extrapolation_warning(model, [c.name for c in sweep.cells if c.info["extrapolated"]])
    if warning:
        say(warning)
    return drive(sweep, analyse,
                 lambda sw, res: build_margin_report(out, sw.state, res), say, tick,
                 analyse_run)
