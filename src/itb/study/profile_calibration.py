"""`itb profile calibrate` (docs/profile.md): the input → goodput / throughput model of
one pursuit mechanism on this testbed (INRIA RR-6874 §3.3.2 and §5).

One cell per RTT: a one-pair dumbbell at the testbed's capacity whose timeline sends one
transfer per input rate X, one after another, each a constant one-step profile sized to
last about `--seconds` at X, with the mechanism's congestion control and enforcement.
Each transfer gives a sample: goodput (volume / completion time), the mean and largest
1 ms wire rate at the bottleneck while it ran. The model (`itb.analysis.profile_model`)
is fitted over the inputs up to `--linear-max` of C and saved with the results and as
runs/profile-model-<mechanism>.json, where `itb profile predict` finds it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from itb.analysis.cells import cell_table
from itb.analysis.profile_model import fit
from itb.analysis.pursuit import CalibrationResults, calibration_samples
from itb.bench.sweep import Outcome, Sweep, SweepCell, drive
from itb.errors import ScenarioError
from itb.scenario.units import format_rate
from itb.study.pursuit_setup import Mechanism, secs, testbed_doc

Say = Callable[[str], None]


@dataclass(frozen=True)
class CalArgs:
    cc: str
    enforce: str  # "pacing" or "application"
    rtts_ms: tuple[float, ...]
    inputs_bps: tuple[int, ...]
    seconds: float  # each transfer lasts about this long at its input
    capacity_bps: int
    linear_max: float  # share of C: inputs above it are left out of the fits
    repeat: int
    seed: int
    open_window: bool = True  # receivers' windows open from the first ACK (RR-6874's receiver)

    @property
    def mechanism(self) -> str:
        return Mechanism(self.cc, self.enforce).name

    def key(self) -> dict:
        return {"cc": self.cc, "enforce": self.enforce, "rtts_ms": list(self.rtts_ms),
                "inputs_bps": list(self.inputs_bps), "seconds": self.seconds,
                "capacity_bps": self.capacity_bps, "linear_max": self.linear_max,
                "repeat": self.repeat, "seed": self.seed, "open_window": self.open_window}


def gap_s(seconds: float, rtt_ms: float) -> float:
    """Start-to-start distance of two calibration transfers: the transfer, half again
    for a mechanism that delivers less than asked, and a pause of 1 s plus 5 RTTs."""
    return 1.5 * seconds + 1.0 + 5 * rtt_ms / 1000


def cell_doc(a: CalArgs, rtt_ms: float) -> tuple[dict, dict[str, int]]:
    transfers, inputs, at = [], {}, 0.0
    how = Mechanism(a.cc, a.enforce).transfer_fields()
    for k, x in enumerate(a.inputs_bps):
        if not 0 < x <= a.capacity_bps:
            raise ScenarioError(None, "--inputs", f"{format_rate(x)} is not in (0, C = "
                                                  f"{format_rate(a.capacity_bps)}]")
        tid = f"x{k + 1}"
        transfers.append({"id": tid, "src": "l1", "dst": "r1", "at": secs(at),
                          "volume": f"{max(1, round(x * a.seconds / 8))}B", **how,
                          "profile": [[0, format_rate(x)]]})
        inputs[tid] = x
        at += gap_s(a.seconds, rtt_ms)
    name = f"profcal-{a.mechanism}-rtt{rtt_ms:g}ms"
    doc = {**testbed_doc(name, f"profile calibration of {a.mechanism} at RTT {rtt_ms:g} ms",
                         1, a.capacity_bps, rtt_ms, a.open_window),
           "experiment": {"name": name, "repetitions": a.repeat, "seed": a.seed,
                          "duration": secs(math.ceil(at + a.seconds)), "interval": "100ms"},
           "transfer": transfers}
    return doc, inputs


def sweep_of(a: CalArgs, out: Path) -> Sweep:
    if not a.rtts_ms or not a.inputs_bps:
        raise ScenarioError(None, "--rtt" if not a.rtts_ms else "--inputs", "give at least one")
    cells = []
    for rtt in a.rtts_ms:
        doc, inputs = cell_doc(a, rtt)
        cells.append(SweepCell(f"rtt{rtt:g}ms", doc, {"rtt_ms": rtt, "inputs": inputs}))
    return Sweep(out, "profile-calibration", a.key(), cells, a.repeat, a.seed)


def analyse(sweep: Sweep) -> CalibrationResults:
    a = sweep.state["args"]
    samples, failed, overlapped = [], 0, 0
    for cell in sweep.state["cells"]:
        tr = cell_table(sweep.out, cell, "transfers")
        bn = cell_table(sweep.out, cell, "bottleneck")
        if tr is None or bn is None:
            continue
        m = calibration_samples(tr, bn, cell["rtt_ms"], cell["inputs"])
        samples += m.samples
        failed += m.failed
        overlapped += m.overlapped
    mechanism = Mechanism(a["cc"], a["enforce"]).name
    try:
        model = fit(samples, mechanism, a["linear_max"] * a["capacity_bps"])
        model.open_receive_window = a.get("open_window", False)
    except ValueError:
        model = None
    res = CalibrationResults(mechanism=mechanism, capacity_bps=a["capacity_bps"], samples=samples,
                  failed=failed, overlapped=overlapped, model=model)
    res.save(sweep.out / "results.json")
    if model is not None:
        model.save(sweep.out / "model.json")
    return res


def run_calibration(a: CalArgs, out: Path, say: Say = print,
                    tick: Say = lambda s: None) -> Outcome[CalibrationResults]:
    from itb.report.build import analyse_run
    from itb.report.profile import build_calibration_report

    return drive(sweep_of(a, out), analyse,
                 lambda sw, res: build_calibration_report(out, sw.state, res), say, tick,
                 analyse_run)
