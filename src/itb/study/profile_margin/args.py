"""The arguments of `itb study profile margin`: the mechanism and its model, the RTTs and
margins (one cell each), how long each transfer is predicted to take."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Annotated

from pydantic import Field, computed_field

from itb.study import options, pursuit
from itb.study.args import Option, OutDir, Seed
from itb.study.pursuit import STUDY_DIR, AtCapacity, Buffer, Capacity, Named, OpenWindow


class MarginArgs(AtCapacity):
    mechanism: Annotated[Named, Option("--mechanism", pursuit.parse_mechanism)] = Field(
        "nocc-pacing",
        validate_default=True,
        description="nocc-pacing (TCP without congestion control, paced), udt, "
        "or CC-ENFORCE such as reno-application.",
    )
    rtts_ms: Annotated[tuple[float, ...], Option("--rtt", options.distinct_ms)] = Field(
        "20ms", validate_default=True, description="RTTs, comma-separated."
    )
    margins: Annotated[tuple[float, ...], Option("--margins", options.margins)] = Field(
        "0:10:0.5",
        validate_default=True,
        description="Margins m in % of C: FROM:TO:STEP or a comma list.",
    )
    seconds: Annotated[float, Option("--seconds")] = Field(
        60.0,
        ge=1.0,
        le=3600.0,
        description="Each transfer's predicted completion time (sets its volume).",
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        10, ge=1, le=100, description="Repetitions per point."
    )
    capacity: Capacity = None
    model_file: Annotated[Path | None, Option("--model"), Field(exclude=True)] = Field(
        None, description="The mechanism's model. [default: runs/profile-model-MECHANISM.json]"
    )
    buffer: Buffer = None  # the bottleneck's queue; None: one BDP
    open_window: OpenWindow = True
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")

    @cached_property
    def model_path(self) -> Path:
        """The model file: --model, else where `itb profile calibrate` keeps it."""
        return pursuit.model_file(self.mechanism, self.model_file)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def model(self) -> str:
        """The model file's identity: a new calibration is a new study."""
        return pursuit.file_digest(self.model_path)

    def warnings(self) -> list[str]:
        w = pursuit.window_warning(self.mechanism, self.model_path, self.open_window)
        return [w] if w else []
