"""The arguments of `itb study streams`: protocols, streams per node, nodes, RTT, the
window measured, and the bottleneck C (C_a = C / 10)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from itb.scenario.experiment.sections import MAX_STREAMS
from itb.study import options
from itb.study.args import Option, OutDir, Seed
from itb.study.bulk import STUDY_DIR, Capacity, Rtt
from itb.study.pursuit import AtCapacity
from itb.suite.classes import DATA_CENTRE_K as SOURCES_K  # (C_a = C / 10: itb.study.longlived)


class StreamsArgs(AtCapacity):
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "bic", validate_default=True, description="Congestion controls (the document's BIC)."
    )
    streams: Annotated[
        tuple[int, ...], Option("--streams", options.counts(MAX_STREAMS, "1,2,5,10"))
    ] = Field("1,2,5,10", validate_default=True, description="Parallel streams per node.")
    nodes: Annotated[int, Option("--nodes")] = Field(
        11,
        ge=1,
        le=2 * SOURCES_K,
        description="Sending nodes, each at C_a = C/10 (the document's 11).",
    )
    rtt_ms: Rtt = Field("11ms", validate_default=True)
    seconds: Annotated[float, Option("--seconds")] = Field(
        30.0, ge=5.0, le=3600.0, description="Seconds measured once every node has started."
    )
    warmup: Annotated[float, Option("--warmup")] = Field(
        5.0, ge=0.0, le=600.0, description="Seconds after the last start before measuring."
    )
    spacing: Annotated[float, Option("--spacing")] = Field(
        1.0, ge=0.0, le=60.0, description="Seconds between the nodes' starts (the document's 1)."
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        2, ge=1, le=100, description="Repetitions per point."
    )
    capacity: Capacity = None
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")

    @property
    def window_s(self) -> tuple[float, float]:
        """[t0, t1] of the timeline measured."""
        t0 = self.spacing * (self.nodes - 1) + self.warmup
        return t0, t0 + self.seconds
