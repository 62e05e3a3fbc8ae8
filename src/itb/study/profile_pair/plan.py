"""The plan of `itb study profile pair`: one cell per (pair of mechanisms, margin m), a
two-pair dumbbell at C whose flows A and B follow complementary step profiles that ask
for (1 − m)·C together, each flow's inputs from its mechanism's model."""

from __future__ import annotations

import math
from pathlib import Path

from itb.analysis.profile_model import Model
from itb.errors import ScenarioError
from itb.scenario.units import format_rate
from itb.study.profile_pair.args import PairArgs
from itb.study.profile_pair.cells import PairCell, PlannedFlow
from itb.study.profile_pair.results import PAIR_SHARES
from itb.study.pursuit import Mechanism, asked_input, extrapolation_warning, secs, testbed_doc
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Say, Sweep, SweepCell


def combo_name(a: Mechanism, b: Mechanism) -> str:
    return f"{a.name}+{b.name}"


def plan_flow(
    model: Model, flow: str, capacity_bps: int, margin: float, rtt_ms: float, seconds: float
) -> PlannedFlow:
    """One flow's throughput steps, the inputs that give them, its volume and prediction."""
    if not 0 <= margin < 1:
        raise ScenarioError(None, "--margins", f"{margin:g} is not a share of C in [0, 1)")
    step_us = round(seconds / 3 * 1e6)
    wanted = tuple(
        (k * step_us, round(share * (1 - margin) * capacity_bps))
        for k, share in enumerate(PAIR_SHARES[flow])
    )
    where = f"flow {flow} at margin {margin * 100:g} %"
    inputs = [asked_input(model, r, rtt_ms, capacity_bps, where) for _t, r in wanted]
    goods = [model.goodput_for_throughput(r, rtt_ms) for _t, r in wanted]
    volume = max(1, round(sum(goods) * seconds / 3 / 8))
    return PlannedFlow(
        flow=flow,
        input_steps=[(t, round(x)) for (t, _r), (x, _b) in zip(wanted, inputs)],
        volume=volume,
        predicted_s=model.completion_s(wanted, volume, rtt_ms),
        extrapolated=any(b for _x, b in inputs),
    )


def cell_doc(
    a: PairArgs, combo: tuple[Mechanism, Mechanism], margin: float, flows: list[PlannedFlow]
) -> dict:
    name = f"pair-{combo_name(*combo)}-m{margin * 100:g}".replace("+", "_")
    transfers = []
    for k, (mech, f) in enumerate(zip(combo, flows), start=1):
        transfers.append(
            {
                "id": f.flow,
                "src": f"l{k}",
                "dst": f"r{k}",
                "volume": f"{f.volume}B",
                **mech.transfer_fields(),
                "profile": [[t / 1e6, format_rate(x)] for t, x in f.input_steps],
            }
        )
    longest = max(f.predicted_s for f in flows)
    return {
        **testbed_doc(
            name,
            f"two complementary profiles at (1 - {margin:g})·C: {combo_name(*combo)}",
            2,
            a.capacity_bps,
            a.rtt_ms,
            a.open_window,
            a.buffer,
        ),
        "experiment": {
            "name": name,
            "repetitions": a.repeat,
            "seed": a.seed,
            "duration": secs(math.ceil(1.5 * longest + 10)),
            "interval": "100ms",
        },
        "transfer": transfers,
    }


def sweep_of(a: PairArgs, models: dict[str, Model], out: Path) -> Sweep[PairCell]:
    if not a.combos or not a.margins:
        raise ScenarioError(None, "--pairs" if not a.combos else "--margins", "give at least one")
    cells = []
    for combo in a.combos:
        for m in a.margins:
            flows = [
                plan_flow(models[mech.name], f, a.capacity_bps, m, a.rtt_ms, a.seconds)
                for mech, f in zip(combo, "AB")
            ]
            info = PairCell(
                name=f"{combo_name(*combo)}-m{m * 100:g}",
                combo=combo_name(*combo),
                mechanisms=[c.name for c in combo],
                margin=m,
                rtt_ms=a.rtt_ms,
                flows=flows,
            )
            cells.append(SweepCell(info, cell_doc(a, combo, m, flows)))
    return Sweep(out, "profile-pair", SweepIndex[PairCell], a.key(), cells, a.repeat, a.seed)


def plan(a: PairArgs, out: Path, say: Say) -> Sweep[PairCell]:
    """The sweep, after a warning per model naming the flows where it is extrapolated."""
    models = {name: Model.load(path) for name, path in a.model_paths.items()}
    sweep = sweep_of(a, models, out)
    for name, model in models.items():
        beyond = [
            f"{c.name} {f.flow}"
            for c in sweep.cells
            for mech, f in zip(c.info.mechanisms, c.info.flows)
            if mech == name and f.extrapolated
        ]
        warning = extrapolation_warning(model, beyond)
        if warning:
            say(warning)
    return sweep
