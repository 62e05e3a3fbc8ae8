"""The arguments of `itb study profile transition`: the mechanisms and RTTs (one cell
each), the low rate and the heights of the steps, how long each is held."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from itb.study import options, pursuit
from itb.study.args import Option, OutDir, Seed
from itb.study.pursuit import STUDY_DIR, AtCapacity, Buffer, Capacity, Named, OpenWindow


class TransitionArgs(AtCapacity):
    mechanisms: Annotated[tuple[Named, ...], Option("--mechanisms", pursuit.mechanisms)] = Field(
        "nocc-pacing,reno-application,udt",
        validate_default=True,
        description="Mechanisms, comma-separated.",
    )
    rtts_ms: Annotated[tuple[float, ...], Option("--rtt", options.distinct_ms)] = Field(
        "10ms,100ms", validate_default=True, description="RTTs, comma-separated."
    )
    low_bps: Annotated[int, Option("--low", options.rate)] = Field(
        "10Mbit", validate_default=True, description="The low rate every step starts from."
    )
    heights_bps: Annotated[tuple[int, ...], Option("--heights", options.each_rate)] = Field(
        "100Mbit,200Mbit,400Mbit,600Mbit,800Mbit",
        validate_default=True,
        description="The high rates, comma-separated.",
    )
    hold_s: Annotated[float, Option("--hold")] = Field(
        4.0, ge=0.5, le=600.0, description="Seconds at each high rate."
    )
    low_hold_s: Annotated[float, Option("--low-hold")] = Field(
        3.0, ge=0.5, le=600.0, description="Seconds at the low rate before each step."
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        3, ge=1, le=100, description="Repetitions per cell."
    )
    capacity: Capacity = None
    buffer: Buffer = None  # the bottleneck's queue; None: one BDP
    open_window: OpenWindow = True
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")

    @model_validator(mode="after")
    def _rates_within_c(self) -> TransitionArgs:
        options.within((self.low_bps,), self.capacity_bps, "--low")
        options.within(self.heights_bps, self.capacity_bps, "--heights")
        return self
