"""What the profile-pursuit studies share (docs/profile.md): the mechanisms by name, the
scenario fields that select one, the dumbbell every cell runs on, the models a study
plans with, and the help of `itb study profile`.

A mechanism is a congestion control with an enforcement ("nocc-pacing": TCP without
congestion control, paced; "reno-application": Reno held by its writes), or "udt": the
UDT endpoint with its own rate controller (INRIA RR-6874 §2).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import Field, PlainSerializer, computed_field

from itb import files
from itb.calibration.record import DEFAULT_CALIBRATION
from itb.errors import ScenarioError
from itb.scenario.experiment.algorithms import KNOWN_CCS
from itb.scenario.experiment.profile import RATE_LO
from itb.scenario.options import csv_option
from itb.scenario.units import format_duration, format_rate
from itb.study import options
from itb.study.args import KEY_IF_SET, Option, StudyArgs

if TYPE_CHECKING:
    from itb.analysis.profile_model import Model

MODEL_DIR = DEFAULT_CALIBRATION.parent
ENFORCEMENTS = ("pacing", "application")
GROUP_HELP = (
    "Profile pursuit studies (INRIA RR-6874): lateness against margin for one constant "
    "profile and for two complementary profiles sharing the bottleneck, the cost of a "
    "low → high step, and the preliminary experiments (CPU, disk, parallel streams). See "
    "docs/profile.md."
)

# The options the profile studies share
STUDY_DIR = (
    "Study directory (default: runs/STUDY-HASH, HASH from the arguments: the same command resumes)."
)
Capacity = Annotated[
    int | None,
    Option("--capacity", options.capacity),
    Field(exclude=True, description="Bottleneck C, e.g. 1Gbit. [default: from the calibration]"),
]
Buffer = Annotated[
    str | None,
    Option("--buffer", options.buffer),
    KEY_IF_SET,
    Field(
        description="The bottleneck's queue: bytes (2MB), packets (100pkt) or a BDP multiple "
        "(0.5bdp). [default: one BDP, at least 64 frames]"
    ),
]
OpenWindow = Annotated[
    bool,
    Option("--open-window/--no-open-window"),
    Field(
        description="Receivers advertise their whole buffer from the first ACK (RR-6874's "
        "receiver), or grow it as Linux does."
    ),
]


class AtCapacity(StudyArgs):
    """Arguments of a study on a bottleneck C: the --capacity given (its field,
    `capacity: Capacity`), else the testbed's calibrated one."""

    if TYPE_CHECKING:
        capacity: int | None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def capacity_bps(self) -> int:
        return options.capacity_bps(self.capacity)


@dataclass(frozen=True)
class Mechanism:
    cc: str  # a TCP congestion control, or "udt"
    enforce: str = "pacing"

    @property
    def name(self) -> str:
        """ "nocc-pacing", "reno-application", …; "udt" for the UDT endpoint."""
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


# A mechanism in a study's arguments: its name in the key
Named = Annotated[Mechanism, PlainSerializer(lambda m: m.name, return_type=str)]


def parse_mechanism(text: str, option: str) -> Mechanism:
    """ "nocc-pacing", "reno-application", "cubic" (paced), "udt"; ScenarioError otherwise."""
    name = text.strip()
    if name == "udt":
        return Mechanism("udt")
    cc, _, enforce = name.partition("-")
    enforce = enforce or "pacing"
    if cc not in KNOWN_CCS or enforce not in ENFORCEMENTS:
        raise ScenarioError(
            None,
            option,
            f"{text!r}: give udt, or a congestion control and "
            f"an enforcement such as nocc-pacing or "
            f"reno-application",
        )
    return Mechanism(cc, enforce)


def mechanisms(text: str, option: str) -> tuple[Mechanism, ...]:
    """Mechanisms, comma-separated."""
    return tuple(parse_mechanism(m, option) for m in csv_option(text, option))


def model_file(mech: Mechanism, given: Path | None) -> Path:
    """The mechanism's model file: the one given (checked as a file ITB reads), else
    where `itb profile calibrate` keeps it; ScenarioError (on --model) when missing."""
    if given is not None:
        files.check(given, "model", "--model")
    path = given or mech.model_path()
    if not path.exists():
        raise ScenarioError(
            None,
            "--model",
            f"{path} does not exist: run `itb profile calibrate "
            f"--cc {mech.cc}"
            + ("" if mech.cc == "udt" else f" --enforce {mech.enforce}")
            + "` first",
        )
    return path


def window_warning(mech: Mechanism, path: Path, open_window: bool) -> str | None:
    """A warning when the model was calibrated with the receivers' windows other than the
    study runs them (its predictions then carry the difference: half a second at 100 ms
    for nocc)."""
    from itb.analysis.profile_model import Model

    calibrated = Model.load(path).open_receive_window
    if mech.protocol != "tcp" or calibrated == open_window:
        return None
    how = {
        True: "open",
        False: "grown by Linux",
        None: "not recorded (an older model: grown by Linux)",
    }
    return (
        f"warning: {path} was calibrated with receive windows {how[calibrated]}, the "
        f"study runs them {how[open_window]}: its predictions are off by the difference"
    )


def file_digest(path: Path) -> str:
    """A model file's identity in a study's arguments (a new calibration, a new study)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def asked_input(
    model: Model, throughput_bps: float, rtt_ms: float, capacity_bps: int, where: str
) -> tuple[float, bool]:
    """The input the model asks for a wanted throughput (eq. 3), and whether that input
    lies beyond the inputs the model was fitted on (extrapolated); ScenarioError (on
    --margins) when no sender could be asked it: not within 1 kbit/s … C."""
    x = model.input_for_throughput(throughput_bps, rtt_ms)
    if not RATE_LO <= x <= capacity_bps:
        raise ScenarioError(
            None,
            "--margins",
            f"{where}: the model of {model.mechanism} asks "
            f"{x / 1e6:.2f} Mbit/s for {throughput_bps / 1e6:.2f} "
            f"Mbit/s at {rtt_ms:g} ms, not within 1 kbit/s … C "
            f"({capacity_bps / 1e6:g} Mbit/s)",
        )
    fitted = max(p.goodput.x_hi for p in model.per_rtt)
    return x, x > fitted


def extrapolation_warning(model: Model, cells: list[str]) -> str | None:
    """A line naming the cells whose inputs lie beyond the model's fitted range."""
    if not cells:
        return None
    fitted = max(p.goodput.x_hi for p in model.per_rtt)
    return (
        f"warning: {', '.join(cells[:6])}{' …' if len(cells) > 6 else ''}: the model of "
        f"{model.mechanism} is extrapolated there (inputs above {fitted / 1e6:g} Mbit/s, the "
        "largest it was fitted on)"
    )


def gap_s(seconds: float, rtt_ms: float) -> float:
    """Start-to-start distance of two transfers at successive inputs (the calibration's,
    stage 0's CPU part): the transfer, half again for a mechanism that delivers less than
    asked, and a pause of 1 s plus 5 RTTs."""
    return 1.5 * seconds + 1.0 + 5 * rtt_ms / 1000


def secs(s: float) -> str:
    return format_duration(round(s * 1e6))


def testbed_doc(
    name: str,
    description: str,
    pairs: int,
    capacity_bps: int,
    rtt_ms: float,
    open_window: bool,
    buffer: str | None = None,
) -> dict:
    """The testbed tables of a dumbbell with `pairs` host pairs, a bottleneck at C and
    the RTT (access links unlimited); `open_window`: receivers advertise their whole
    buffer from the first ACK (RR-6874's patched receiver); `buffer`: the bottleneck's
    queue (a scenario's `buffer`: bytes, packets or a BDP multiple; None: one BDP)."""
    return {
        "testbed": {
            "name": name[:64],
            "topology": "dumbbell",
            "description": description,
            **({"open_receive_window": True} if open_window else {}),
        },
        "dumbbell": {"pairs": pairs},
        "bottleneck": {
            "rate": format_rate(capacity_bps),
            "rtt": secs(rtt_ms / 1000),
            **({"buffer": buffer} if buffer else {}),
        },
    }


def margin_cell(m: float | None) -> str:
    """A margin in a printed table: "2.5 %", or "none" (no margin was enough)."""
    return "none" if m is None else f"{m * 100:g} %"
