"""`itb study profile pair` (docs/profile.md): two complementary step profiles sharing
one bottleneck (INRIA RR-6874 §3.4 and §6.1, figures 3, 14 and 15).

With C' = (1 − m)·C, flow A asks for 0.25·C', then 0.75·C', then 0.5·C' of throughput
at the bottleneck, and flow B for 0.75·C', 0.25·C', 0.5·C', each step a third of
`--seconds`: together they ask for C' at every moment and both should end on the
common last step. Each flow's input profile comes from its mechanism's model (eq. 3),
its volume is what the model's goodputs (eq. 6) deliver in `--seconds`, and its
lateness is measured − predicted completion. One cell per (pair of mechanisms, margin);
both flows start at the same date (ITB's dispatch error is recorded: well under 1 ms).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from itb.analysis.profile_model import Model
from itb.analysis.pursuit_studies import (
    LATENESS_LIMITS_S,
    PAIR_SHARES,
    PairFlow,
    PairPoint,
    PairResults,
    PairThreshold,
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
class PairArgs:
    combos: tuple[tuple[Mechanism, Mechanism], ...]  # (flow A's, flow B's)
    margins: tuple[float, ...]
    rtt_ms: float
    seconds: float
    repeat: int
    capacity_bps: int
    open_window: bool
    seed: int
    models: dict[str, Path]  # mechanism name → model file
    buffer: str | None = None  # the bottleneck's queue; None: one BDP

    def key(self, digests: dict[str, str]) -> dict:
        return {"combos": [[a.name, b.name] for a, b in self.combos], "margins": list(self.margins),
                "rtt_ms": self.rtt_ms, "seconds": self.seconds, "repeat": self.repeat,
                "capacity_bps": self.capacity_bps, "open_window": self.open_window,
                "seed": self.seed, "models": digests,
                **({"buffer": self.buffer} if self.buffer else {})}


def combo_name(a: Mechanism, b: Mechanism) -> str:
    return f"{a.name}+{b.name}"


def plan_flow(model: Model, flow: str, capacity_bps: int, margin: float, rtt_ms: float,
              seconds: float) -> dict:
    """One flow's throughput steps, the inputs that give them, its volume and prediction."""
    if not 0 <= margin < 1:
        raise ScenarioError(None, "--margins", f"{margin:g} is not a share of C in [0, 1)")
    step_us = round(seconds / 3 * 1e6)
    wanted = tuple((k * step_us, round(share * (1 - margin) * capacity_bps))
                   for k, share in enumerate(PAIR_SHARES[flow]))
    where = f"flow {flow} at margin {margin * 100:g} %"
    inputs = [asked_input(model, r, rtt_ms, capacity_bps, where) for _t, r in wanted]
    goods = [model.goodput_for_throughput(r, rtt_ms) for _t, r in wanted]
    volume = max(1, round(sum(goods) * seconds / 3 / 8))
    return {"flow": flow, "input_steps": [[t, round(x)] for (t, _r), (x, _b) in zip(wanted, inputs)],
            "volume": volume, "predicted_s": model.completion_s(wanted, volume, rtt_ms),
            "extrapolated": any(b for _x, b in inputs)}


def cell_doc(a: PairArgs, combo: tuple[Mechanism, Mechanism], margin: float,
             flows: list[dict]) -> dict:
    name = f"pair-{combo_name(*combo)}-m{margin * 100:g}".replace("+", "_")
    transfers = []
    for k, (mech, f) in enumerate(zip(combo, flows), start=1):
        transfers.append({"id": f["flow"], "src": f"l{k}", "dst": f"r{k}",
                          "volume": f"{f['volume']}B", **mech.transfer_fields(),
                          "profile": [[t / 1e6, format_rate(x)] for t, x in f["input_steps"]]})
    longest = max(f["predicted_s"] for f in flows)
    return {**testbed_doc(name, f"two complementary profiles at (1 - {margin:g})·C: "
                                f"{combo_name(*combo)}", 2, a.capacity_bps, a.rtt_ms,
                          a.open_window, a.buffer),
            "experiment": {"name": name, "repetitions": a.repeat, "seed": a.seed,
                           "duration": secs(math.ceil(1.5 * longest + 10)), "interval": "100ms"},
            "transfer": transfers}


def sweep_of(a: PairArgs, models: dict[str, Model], digests: dict[str, str], out: Path) -> Sweep:
    if not a.combos or not a.margins:
        raise ScenarioError(None, "--pairs" if not a.combos else "--margins", "give at least one")
    cells = []
    for combo in a.combos:
        for m in a.margins:
            flows = [plan_flow(models[mech.name], f, a.capacity_bps, m, a.rtt_ms, a.seconds)
                     for mech, f in zip(combo, "AB")]
            info = {"combo": combo_name(*combo), "mechanisms": [c.name for c in combo],
                    "margin": m, "rtt_ms": a.rtt_ms, "flows": flows}
            cells.append(SweepCell(f"{combo_name(*combo)}-m{m * 100:g}",
                                   cell_doc(a, combo, m, flows), info))
    return Sweep(out, "profile-pair", a.key(digests), cells, a.repeat, a.seed)


def analyse(sweep: Sweep) -> PairResults:
    a = sweep.state["args"]
    points = []
    for cell in sweep.state["cells"]:
        tr, fwd = cell_logs(sweep.out, cell)
        flows, bursts = [], []
        for mech, f in zip(cell["mechanisms"], cell["flows"]):
            late, failed = ([], 0) if tr is None else lateness_values(
                tr[tr["transfer"] == f["flow"]], f["predicted_s"])
            flows.append(PairFlow(flow=f["flow"], mechanism=mech,
                                  input_steps=[tuple(s) for s in f["input_steps"]],
                                  volume=f["volume"], predicted_s=f["predicted_s"],
                                  lateness=spread(late, failed)))
        if tr is not None and fwd is not None:
            for rep, g in tr.groupby("repetition"):
                lo, hi = g["start_ns"].min(), g["end_ns"].max()
                if math.isfinite(lo) and math.isfinite(hi):
                    bursts.append(burst_of(fwd[fwd["repetition"] == rep], lo, hi))
        points.append(PairPoint(combo=cell["combo"], margin=cell["margin"], rtt_ms=cell["rtt_ms"],
                                flows=flows, burst=pooled_burst(bursts)))
    points.sort(key=lambda p: (p.combo, p.margin))
    thresholds = []
    for combo in dict.fromkeys(p.combo for p in points):
        mine = [p for p in points if p.combo == combo]
        for k, f in enumerate(mine[0].flows):
            for lim in LATENESS_LIMITS_S:
                thresholds.append(PairThreshold(
                    combo=combo, flow=f.flow, mechanism=f.mechanism, limit_s=lim,
                    margin=margin_needed([(p.margin, p.flows[k].lateness) for p in mine], lim)))
    res = PairResults(capacity_bps=a["capacity_bps"], seconds=a["seconds"],
                      open_window=a["open_window"], points=points, thresholds=thresholds)
    res.save(sweep.out / "results.json")
    return res


def run_pair(a: PairArgs, out: Path, say: Say = print,
             tick: Say = lambda s: None) -> Outcome[PairResults]:
    from itb.report.build import analyse_run
    from itb.report.profile_studies import build_pair_report

    models = {name: Model.load(path) for name, path in a.models.items()}
    digests = {name: file_digest(path) for name, path in sorted(a.models.items())}
    sweep = sweep_of(a, models, digests, out)
    for name, model in models.items():
        beyond = [f"{c.name} {f['flow']}" for c in sweep.cells
                  for mech, f in zip(c.info["mechanisms"], c.info["flows"])
                  if mech == name and f["extrapolated"]]
        warning = extrapolation_warning(model, beyond)
        if warning:
            say(warning)
    return drive(sweep, analyse,
                 lambda sw, res: build_pair_report(out, sw.state, res), say, tick,
                 analyse_run)
