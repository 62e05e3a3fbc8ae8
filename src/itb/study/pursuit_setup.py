"""What the profile-pursuit studies share (docs/profile.md): the mechanisms by name, the
scenario fields that select one, and the dumbbell every cell runs on.

A mechanism is a congestion control with an enforcement ("nocc-pacing": TCP without
congestion control, paced; "reno-application": Reno held by its writes), or "udt": the
UDT endpoint with its own rate controller (INRIA RR-6874 §2).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from itb.analysis.cells import cell_table
from itb.analysis.pursuit import BOTTLENECK
from itb.analysis.series import select_link
from itb.bench.scaling import DEFAULT_CALIBRATION
from itb.errors import ScenarioError
from itb.scenario.algorithms import KNOWN_CCS
from itb.scenario.profile import RATE_LO
from itb.scenario.units import format_duration, format_rate

MODEL_DIR = DEFAULT_CALIBRATION.parent
ENFORCEMENTS = ("pacing", "application")


@dataclass(frozen=True)
class Mechanism:
    cc: str  # a TCP congestion control, or "udt"
    enforce: str = "pacing"

    @property
    def name(self) -> str:
        """"nocc-pacing", "reno-application", …; "udt" for the UDT endpoint."""
        return "udt" if self.cc == "udt" else f"{self.cc}-{self.enforce}"

    @property
    def protocol(self) -> str:
        return "udt" if self.cc == "udt" else "tcp"

    def transfer_fields(self) -> dict:
        """The fields of a scenario's [[transfer]] that select it."""
        return {"protocol": "udt"} if self.cc == "udt" else {"cc": self.cc, "enforce": self.enforce}

    def model_path(self, root: Path = MODEL_DIR) -> Path:
        """Where `itb profile calibrate` keeps its model."""
        return root / f"profile-model-{self.name}.json"


def parse_mechanism(text: str, option: str) -> Mechanism:
    """"nocc-pacing", "reno-application", "cubic" (paced), "udt"; ScenarioError otherwise."""
    name = text.strip()
    if name == "udt":
        return Mechanism("udt")
    cc, _, enforce = name.partition("-")
    enforce = enforce or "pacing"
    if cc not in KNOWN_CCS or enforce not in ENFORCEMENTS:
        raise ScenarioError(None, option, f"{text!r}: give udt, or a congestion control and "
                                          f"an enforcement such as nocc-pacing or "
                                          f"reno-application")
    return Mechanism(cc, enforce)


def cell_logs(out: Path, cell: dict) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """A cell's transfers table and its bottleneck's forward log (1 ms rows), None
    before its run made them."""
    tr, bn = cell_table(out, cell, "transfers"), cell_table(out, cell, "bottleneck")
    return tr, None if bn is None else select_link(bn, "forward", BOTTLENECK)


def lateness_values(rows: pd.DataFrame, predicted_s: float) -> tuple[list[float], int]:
    """Completion − prediction of the completed transfers among `rows`, and how many did
    not complete (counted, not dropped)."""
    done = rows["ok"].astype(bool) & np.isfinite(rows["completion_s"].to_numpy(dtype=float))
    return (rows.loc[done, "completion_s"] - predicted_s).tolist(), int((~done).sum())


def file_digest(path: Path) -> str:
    """A model file's identity in a study's arguments (a new calibration, a new study)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def asked_input(model, throughput_bps: float, rtt_ms: float, capacity_bps: int,
                where: str) -> tuple[float, bool]:
    """The input the model asks for a wanted throughput (eq. 3), and whether that input
    lies beyond the inputs the model was fitted on (extrapolated); ScenarioError (on
    --margins) when no sender could be asked it: not within 1 kbit/s … C."""
    x = model.input_for_throughput(throughput_bps, rtt_ms)
    if not RATE_LO <= x <= capacity_bps:
        raise ScenarioError(None, "--margins", f"{where}: the model of {model.mechanism} asks "
                                               f"{x / 1e6:.2f} Mbit/s for {throughput_bps / 1e6:.2f} "
                                               f"Mbit/s at {rtt_ms:g} ms, not within 1 kbit/s … C "
                                               f"({capacity_bps / 1e6:g} Mbit/s)")
    fitted = max(p.goodput.x_hi for p in model.per_rtt)
    return x, x > fitted


def extrapolation_warning(model, cells: list[str]) -> str | None:
    """A line naming the cells whose inputs lie beyond the model's fitted range."""
    if not cells:
        return None
    fitted = max(p.goodput.x_hi for p in model.per_rtt)
    return (f"warning: {', '.join(cells[:6])}{' …' if len(cells) > 6 else ''}: the model of "
            f"{model.mechanism} is extrapolated there (inputs above {fitted / 1e6:g} Mbit/s, the "
            "largest it was fitted on)")


def secs(s: float) -> str:
    return format_duration(round(s * 1e6))


def testbed_doc(name: str, description: str, pairs: int, capacity_bps: int, rtt_ms: float,
                open_window: bool, buffer: str | None = None) -> dict:
    """The testbed tables of a dumbbell with `pairs` host pairs, a bottleneck at C and
    the RTT (access links unlimited); `open_window`: receivers advertise their whole
    buffer from the first ACK (RR-6874's patched receiver); `buffer`: the bottleneck's
    queue (a scenario's `buffer`: bytes, packets or a BDP multiple; None: one BDP)."""
    return {"testbed": {"name": name[:64], "topology": "dumbbell", "description": description,
                        **({"open_receive_window": True} if open_window else {})},
            "dumbbell": {"pairs": pairs},
            "bottleneck": {"rate": format_rate(capacity_bps), "rtt": secs(rtt_ms / 1000),
                           **({"buffer": buffer} if buffer else {})}}
