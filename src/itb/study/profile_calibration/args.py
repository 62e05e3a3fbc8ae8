"""The arguments of `itb profile calibrate`: the mechanism (congestion control and
enforcement), the RTTs (one cell each), the input rates and how long each transfer lasts."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated

from pydantic import Field, ValidationInfo, computed_field, field_validator

from itb.errors import ScenarioError
from itb.study import options
from itb.study.args import Option, OutDir, Seed
from itb.study.pursuit import ENFORCEMENTS, AtCapacity, Capacity, Mechanism, OpenWindow


def given_rates(text: str, flag: str) -> tuple[int, ...] | None:
    """--inputs: rates, comma-separated ('' as not given)."""
    return options.rates(text, flag) if text else None


class CalibrationArgs(AtCapacity):
    cc: Annotated[str, Option("--cc")] = Field(
        "nocc",
        description="Congestion control of the transfers (nocc: TCP without congestion "
        "control), or udt: the UDT endpoint with its rate controller.",
    )
    enforce: Annotated[str, Option("--enforce")] = Field(
        "pacing",
        description="How the rate is kept: pacing (SO_MAX_PACING_RATE) or application "
        "(the sender's writes).",
    )
    rtts_ms: Annotated[tuple[float, ...], Option("--rtt", options.durations_ms)] = Field(
        "0ms,10ms,100ms", validate_default=True, description="RTTs swept, comma-separated."
    )
    inputs: Annotated[
        tuple[int, ...] | None, Option("--inputs", given_rates), Field(exclude=True)
    ] = Field(
        None, description="Input rates X, e.g. 100Mbit,200Mbit. [default: 5 %, 15 %, … 95 % of C]"
    )
    seconds: Annotated[float, Option("--seconds")] = Field(
        8.0, ge=1.0, le=600.0, description="Each transfer's length at its input (sets its volume)."
    )
    linear_max: Annotated[float, Option("--linear-max")] = Field(
        0.9,
        ge=0.05,
        le=1.0,
        description="Fit over the inputs up to this share of C (the linear part).",
    )
    capacity: Capacity = None
    repeat: Annotated[int, Option("--repeat")] = Field(
        1, ge=1, le=100, description="Repetitions per RTT."
    )
    out_dir: OutDir = Field(
        None,
        description="Study directory (default: "
        "runs/profile-calibration-HASH; the same command resumes).",
    )
    seed: Seed = Field(1, description="Seed of the run order.")
    open_window: OpenWindow = Field(
        True,
        description="Receivers advertise their whole buffer "
        "from the first ACK (the document's patched receiver; "
        "testbed option open_receive_window), or grow it as Linux "
        "does.",
    )

    @field_validator("enforce")
    @classmethod
    def _kept_by(cls, enforce: str, info: ValidationInfo) -> str:
        if info.data.get("cc") == "udt" and enforce != "pacing":
            raise ScenarioError(None, "--enforce", "UDT keeps its rate by its own controller")
        if enforce not in ENFORCEMENTS:
            raise ScenarioError(None, "--enforce", f"{enforce!r}: give pacing or application")
        return enforce

    @property
    def mechanism(self) -> Mechanism:
        return Mechanism(self.cc, self.enforce)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def inputs_bps(self) -> tuple[int, ...]:
        """The inputs given, else 5 %, 15 %, … 95 % of C."""
        cap = self.capacity_bps
        return self.inputs or tuple(round(cap * (0.05 + 0.1 * k)) for k in range(10))
