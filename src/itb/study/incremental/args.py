"""The arguments of `itb study incremental`: protocols, RTTs, how many flows join and
how often, and the bottleneck C (C_a = C / 10)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from itb.study import options
from itb.study.args import Option, OutDir, Seed
from itb.study.bulk import STUDY_DIR, Capacity
from itb.study.pursuit import AtCapacity
from itb.suite.classes import DATA_CENTRE_K as SOURCES_K  # (C_a = C / 10: itb.study.longlived)


class IncrementalArgs(AtCapacity):
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "cubic,reno", validate_default=True, description="Congestion controls."
    )
    rtts_ms: Annotated[tuple[float, ...], Option("--rtt", options.path_rtts_ms)] = Field(
        "11ms,100ms",
        validate_default=True,
        description="RTTs (every flow of a cell at the same RTT; the document's 11 and 100 ms).",
    )
    flows: Annotated[int, Option("--flows")] = Field(
        12, ge=2, le=2 * SOURCES_K, description="Flows that join, one per period."
    )
    period: Annotated[float, Option("--period")] = Field(
        10.0,
        ge=2.0,
        le=600.0,
        description="Seconds between two flows' starts (the document's 200; each step's "
        "second half is measured).",
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        2, ge=1, le=100, description="Repetitions per point."
    )
    capacity: Capacity = None
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")
