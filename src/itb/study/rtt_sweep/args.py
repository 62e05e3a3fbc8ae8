"""The arguments of `itb study rtt-sweep`: protocols, RTTs, flow counts, the window
measured, and the bottleneck C (C_a = C / 10)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from itb.study import options
from itb.study.args import Option, OutDir, Seed
from itb.study.bulk import STUDY_DIR, Capacity
from itb.study.pursuit import AtCapacity
from itb.suite.classes import DATA_CENTRE_K as SOURCES_K  # (C_a = C / 10: itb.study.longlived)

MAX_FLOWS = 2 * SOURCES_K  # C_g up to 2


class RttSweepArgs(AtCapacity):
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "cubic,reno", validate_default=True, description="Congestion controls."
    )
    rtts_ms: Annotated[tuple[float, ...], Option("--rtt", options.path_rtts_ms)] = Field(
        "1ms,20ms,50ms,100ms,200ms",
        validate_default=True,
        description="RTTs of the sweep (every flow of a cell at the same RTT).",
    )
    flows: Annotated[tuple[int, ...], Option("--flows", options.counts(MAX_FLOWS, "5,12"))] = Field(
        "5,12",
        validate_default=True,
        description="Flows per cell, each paced at C_a = C/10 (the documents' 5: no "
        "congestion; 12: C_g = 1.2).",
    )
    seconds: Annotated[float, Option("--seconds")] = Field(
        30.0, ge=5.0, le=3600.0, description="Seconds measured once every flow has started."
    )
    warmup: Annotated[float, Option("--warmup")] = Field(
        5.0, ge=0.0, le=600.0, description="Seconds after the last start before measuring."
    )
    spacing: Annotated[float, Option("--spacing")] = Field(
        0.5, ge=0.0, le=60.0, description="Seconds between the flows' starts."
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        2, ge=1, le=100, description="Repetitions per point."
    )
    capacity: Capacity = None
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")
