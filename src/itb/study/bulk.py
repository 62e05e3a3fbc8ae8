"""What the studies of BU cells share (predictability, friendliness): their options for the
path, the start span and the scale of the K = 10 class to this testbed (INRIA RR-6256,
RR-6244: the report's 1 Gbit/s nodes on a 10 Gbit/s bottleneck)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Annotated

from pydantic import Field, computed_field, field_serializer

from itb.study import options
from itb.study.args import Option, StudyArgs
from itb.suite.scaling import Scale, make_scale

# Forward starts stay within this share of one transfer's time at C_a. With a perfectly
# fair protocol the fluid model then keeps the slope of T_mean against C_g within ~1.5 %
# of the transfer time and CoV under 0.1 % (tests/unit/test_predictability.py); the
# report's own 1 s between ~400 s transfers spreads 20 starts over 4.75 %.
MAX_SPAN = 0.025
STUDY_DIR = (
    "Study directory (default: runs/STUDY-HASH, HASH from the arguments: the same command resumes)."
)

Rtt = Annotated[float, Option("--rtt", options.rtt_ms), Field(description="RTT of every path.")]
# of one transfer's time (None: exactly the spacing apart, as the report planned)
MaxSpan = Annotated[
    float | None,
    Option("--max-span"),
    Field(
        ge=0.0,
        le=1.0,
        description="Every forward source starts within this share of one "
        "transfer's time (keeps a fair protocol's T_mean on the ideal line).",
    ),
]
ScaleFactor = Annotated[
    float | None,
    Option("--scale"),
    Field(
        exclude=True,
        description="Scale factor: C = 10 Gbit/s ÷ factor. [default: from the calibration]",
    ),
]
Capacity = Annotated[
    int | None,
    Option("--capacity", options.capacity),
    Field(exclude=True, description="Bottleneck C, e.g. 500Mbit, instead of the calibrated one."),
]


class Scaled(StudyArgs):
    """Arguments of a study whose classes are scaled to this testbed (`scale`, in the key):
    from its fields `transfer_time` (--transfer-time), `scale_factor` (--scale) and
    `capacity` (--capacity), else from the calibration."""

    if TYPE_CHECKING:
        transfer_time: float
        scale_factor: float | None
        capacity: int | None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def scale(self) -> Scale:
        return make_scale(
            factor=self.scale_factor, capacity_bps=self.capacity, transfer_time_s=self.transfer_time
        )

    @field_serializer("scale")
    def _scale_json(self, scale: Scale) -> dict:
        return scale.to_json()
