"""The arguments of `itb study friendliness`: the tested protocols and the reference, the
congestion levels, and the scale of the K = 10 class to this testbed."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from itb.study import options
from itb.study.args import Option, OutDir, Seed
from itb.study.bulk import MAX_SPAN, STUDY_DIR, Capacity, MaxSpan, Rtt, Scaled, ScaleFactor


class FriendlinessArgs(Scaled):
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(  # tested
        "cubic,bbr", validate_default=True, description="Tested congestion controls."
    )
    reference: Annotated[str, Option("--reference", options.one_cc)] = Field(
        "reno",
        validate_default=True,
        description="The reference TCP the tested ones share the bottleneck with.",
    )
    c_g: Annotated[tuple[float, ...], Option("--cg", options.levels)] = Field(
        "1.5,2",
        validate_default=True,
        description="Congestion levels C_g (forward sources' capacity over C; half "
        "of them on each protocol).",
    )
    rtt_ms: Rtt = Field("20ms", validate_default=True)
    repeat: Annotated[int, Option("--repeat")] = Field(
        3, ge=1, le=100, description="Repetitions per point."
    )
    transfer_time: Annotated[float, Option("--transfer-time"), Field(exclude=True)] = Field(
        15.0, description="Seconds one transfer takes alone at C_a (sets the volume)."
    )
    max_span: MaxSpan = MAX_SPAN
    scale_factor: ScaleFactor = None
    capacity: Capacity = None
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")
