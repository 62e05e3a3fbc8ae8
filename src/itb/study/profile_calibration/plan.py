"""The plan of `itb profile calibrate`: one cell per RTT, a one-pair dumbbell at C whose
timeline sends one transfer per input rate, one after another, each a constant profile
sized to last about `--seconds` at its input."""

from __future__ import annotations

import math
from pathlib import Path

from itb.errors import ScenarioError
from itb.scenario.units import format_rate
from itb.study.profile_calibration.args import CalibrationArgs
from itb.study.profile_calibration.cells import CalibrationCell
from itb.study.pursuit import gap_s, secs, testbed_doc
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell


def cell_doc(a: CalibrationArgs, rtt_ms: float) -> tuple[dict, dict[str, int]]:
    transfers, inputs, at = [], {}, 0.0
    how = a.mechanism.transfer_fields()
    for k, x in enumerate(a.inputs_bps):
        if not 0 < x <= a.capacity_bps:
            raise ScenarioError(
                None,
                "--inputs",
                f"{format_rate(x)} is not in (0, C = {format_rate(a.capacity_bps)}]",
            )
        tid = f"x{k + 1}"
        transfers.append(
            {
                "id": tid,
                "src": "l1",
                "dst": "r1",
                "at": secs(at),
                "volume": f"{max(1, round(x * a.seconds / 8))}B",
                **how,
                "profile": [[0, format_rate(x)]],
            }
        )
        inputs[tid] = x
        at += gap_s(a.seconds, rtt_ms)
    name = f"profcal-{a.mechanism.name}-rtt{rtt_ms:g}ms"
    doc = {
        **testbed_doc(
            name,
            f"profile calibration of {a.mechanism.name} at RTT {rtt_ms:g} ms",
            1,
            a.capacity_bps,
            rtt_ms,
            a.open_window,
        ),
        "experiment": {
            "name": name,
            "repetitions": a.repeat,
            "seed": a.seed,
            "duration": secs(math.ceil(at + a.seconds)),
            "interval": "100ms",
        },
        "transfer": transfers,
    }
    return doc, inputs


def sweep_of(a: CalibrationArgs, out: Path) -> Sweep[CalibrationCell]:
    if not a.rtts_ms or not a.inputs_bps:
        raise ScenarioError(None, "--rtt" if not a.rtts_ms else "--inputs", "give at least one")
    cells = []
    for rtt in a.rtts_ms:
        doc, inputs = cell_doc(a, rtt)
        cells.append(
            SweepCell(CalibrationCell(name=f"rtt{rtt:g}ms", rtt_ms=rtt, inputs=inputs), doc)
        )
    return Sweep(
        out, "profile-calibration", SweepIndex[CalibrationCell], a.key(), cells, a.repeat, a.seed
    )
