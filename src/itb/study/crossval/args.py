"""The arguments of `itb study crossval`: the protocols, the path (C, RTT; the queue one
BDP), the repetitions and their start jitter, the transfers' length."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from itb.study import options
from itb.study.args import Option, OutDir, Seed
from itb.study.bulk import STUDY_DIR, Capacity, Rtt
from itb.study.pursuit import AtCapacity


class CrossvalArgs(AtCapacity):
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "reno,cubic", validate_default=True, description="Congestion controls compared."
    )
    rtt_ms: Rtt = Field("20ms", validate_default=True)
    capacity: Capacity = None
    seconds: Annotated[float, Option("--seconds")] = Field(
        5.0,
        ge=0.5,
        le=600.0,
        description="One transfer's time at its fair share (sets the volumes); the steady "
        "flow is measured over as long, after as long again.",
    )
    sources: Annotated[int, Option("--sources")] = Field(
        4, ge=2, le=64, description="Sources of the multi-flow cells (C_g = sources · C_a / C)."
    )
    loads: Annotated[tuple[float, ...], Option("--cg", options.loads)] = Field(
        "0.8,2", validate_default=True, description="C_g of the multi-flow cells (0.8–2)."
    )
    jitter_ms: Annotated[float, Option("--jitter")] = Field(
        20.0,
        ge=0.0,
        le=10_000.0,
        description="Each repetition starts every transfer up to this many ms later (seeded): "
        "a simulation's repetitions differ by it, the testbed's by it and its own noise.",
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        10, ge=2, le=100, description="Repetitions per cell, emulated and simulated alike."
    )
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order and of the start jitter.")
