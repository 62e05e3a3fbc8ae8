"""The plan of `itb study profile margin`: one cell per (RTT, margin m), a one-pair
dumbbell at C whose one transfer asks the model for (1 − m)·C at the bottleneck."""

from __future__ import annotations

import math
from pathlib import Path

from itb.analysis.profile_model import Model
from itb.errors import ScenarioError
from itb.scenario.units import format_rate
from itb.study.profile_margin.args import MarginArgs
from itb.study.profile_margin.cells import MarginCell
from itb.study.pursuit import asked_input, extrapolation_warning, secs, testbed_doc
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Say, Sweep, SweepCell


def plan_point(
    model: Model, capacity_bps: int, margin: float, rtt_ms: float, seconds: float
) -> MarginCell:
    """The cell at (RTT, margin): what it asks for and what the model predicts."""
    if not 0 <= margin < 1:
        raise ScenarioError(None, "--margins", f"{margin:g} is not a share of C in [0, 1)")
    target = (1 - margin) * capacity_bps
    x, beyond = asked_input(model, target, rtt_ms, capacity_bps, f"margin {margin * 100:g} %")
    good = model.goodput_for_throughput(target, rtt_ms)
    volume = max(1, round(good * seconds / 8))
    steps = ((0, round(target)),)
    return MarginCell(
        name=f"rtt{rtt_ms:g}ms-m{margin * 100:g}",
        rtt_ms=rtt_ms,
        margin=margin,
        target_bps=target,
        input_bps=round(x),
        volume=volume,
        predicted_s=model.completion_s(steps, volume, rtt_ms),
        extrapolated=beyond,
    )


def cell_doc(a: MarginArgs, p: MarginCell) -> dict:
    name = f"margin-{a.mechanism.name}-rtt{p.rtt_ms:g}-m{p.margin * 100:g}"
    return {
        **testbed_doc(
            name,
            f"constant profile at (1 - {p.margin:g})·C, {a.mechanism.name}, RTT {p.rtt_ms:g} ms",
            1,
            a.capacity_bps,
            p.rtt_ms,
            a.open_window,
            a.buffer,
        ),
        "experiment": {
            "name": name,
            "repetitions": a.repeat,
            "seed": a.seed,
            "duration": secs(math.ceil(1.5 * p.predicted_s + 10)),
            "interval": "100ms",
        },
        "transfer": [
            {
                "id": "m",
                "src": "l1",
                "dst": "r1",
                "volume": f"{p.volume}B",
                **a.mechanism.transfer_fields(),
                "profile": [[0, format_rate(p.input_bps)]],
            }
        ],
    }


def sweep_of(a: MarginArgs, model: Model, out: Path) -> Sweep[MarginCell]:
    if not a.rtts_ms or not a.margins:
        raise ScenarioError(None, "--rtt" if not a.rtts_ms else "--margins", "give at least one")
    cells = []
    for rtt in a.rtts_ms:
        for m in a.margins:
            p = plan_point(model, a.capacity_bps, m, rtt, a.seconds)
            cells.append(SweepCell(p, cell_doc(a, p)))
    return Sweep(out, "profile-margin", SweepIndex[MarginCell], a.key(), cells, a.repeat, a.seed)


def plan(a: MarginArgs, out: Path, say: Say) -> Sweep[MarginCell]:
    """The sweep, after a warning naming the cells where the model is extrapolated."""
    model = Model.load(a.model_path)
    sweep = sweep_of(a, model, out)
    warning = extrapolation_warning(model, [c.name for c in sweep.cells if c.info.extrapolated])
    if warning:
        say(warning)
    return sweep
