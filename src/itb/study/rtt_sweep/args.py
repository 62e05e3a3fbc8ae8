"""The arguments of `itb study rtt-sweep`: protocols, RTTs, flow counts, the window
measured, and the bottleneck C (C_a = C / 10)."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated

from pydantic import Field, computed_field, model_validator

from itb.errors import ScenarioError
from itb.study import options
from itb.study.args import Option, OutDir, Seed, StudyArgs
from itb.study.bulk import STUDY_DIR, Capacity
from itb.suite.classes import DATA_CENTRE_K as SOURCES_K  # (C_a = C / 10: itb.study.longlived)

MAX_FLOWS = 2 * SOURCES_K  # C_g up to 2


def flow_counts(text: str, flag: str) -> tuple[int, ...]:
    """Flow counts, comma-separated, 1 to MAX_FLOWS each, none twice."""
    try:
        counts = tuple(int(p) for p in text.split(","))
    except ValueError:
        raise ScenarioError(None, flag, f"{text!r}: give whole numbers, e.g. 5,12") from None
    if not counts or any(not 1 <= n <= MAX_FLOWS for n in counts):
        raise ScenarioError(None, flag, f"{text!r}: each count 1 to {MAX_FLOWS}")
    return options.once(counts, flag, str)


class RttSweepArgs(StudyArgs):
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "cubic,reno", validate_default=True, description="Congestion controls."
    )
    rtts_ms: Annotated[tuple[float, ...], Option("--rtt", options.distinct_ms)] = Field(
        "1ms,20ms,50ms,100ms,200ms",
        validate_default=True,
        description="RTTs of the sweep (every flow of a cell at the same RTT).",
    )
    flows: Annotated[tuple[int, ...], Option("--flows", flow_counts)] = Field(
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

    @model_validator(mode="after")
    def _rtts(self) -> RttSweepArgs:
        if any(not 0 < r <= 2000 for r in self.rtts_ms):
            raise ScenarioError(None, "--rtt", "each RTT above 0 and at most 2 s")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def capacity_bps(self) -> int:
        return options.capacity_bps(self.capacity)
