"""The arguments of `itb study predictability`: the protocols, congestion levels, reverse
levels and spacing swept, where synchronised starts are compared, the fits' range, and the
scale of the K = 10 class to this testbed."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from itb.study import options
from itb.study.args import Option, OutDir, Seed
from itb.study.bulk import MAX_SPAN, STUDY_DIR, Capacity, MaxSpan, Rtt, Scaled, ScaleFactor


class PredictabilityArgs(Scaled):
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "cubic,reno", validate_default=True, description="Congestion controls, comma-separated."
    )
    c_g: Annotated[tuple[float, ...], Option("--cg", options.levels)] = Field(
        "0.8,1,1.4,1.7,2",
        validate_default=True,
        description="Congestion levels C_g (forward sources' capacity over C).",
    )
    # levels, or "sym" (as many reverse as forward sources)
    reverse: Annotated[tuple[float | str, ...], Option("--reverse", options.sym_levels)] = Field(
        "0",
        validate_default=True,
        description="Reverse-traffic levels R, e.g. 0,0.7,0.9,1.1,sym (sym: as many "
        "reverse as forward sources).",
    )
    spacing_s: Annotated[float, Option("--spacing")] = Field(  # the spaced case, before the cap
        1.0,
        ge=0,
        description="Start spacing of the spaced case (s), shrunk to fit --max-span; "
        "0 s is always compared with it.",
    )
    max_span: MaxSpan = MAX_SPAN
    # T_mean against R: these reverse levels at sync_c_g too (RR-6244 §5: no, non-congesting
    # and congesting reverse traffic are the cases that matter)
    r_levels: Annotated[
        tuple[float | str, ...], Option("--r-levels", options.optional_sym_levels)
    ] = Field(
        "0,1.5",
        validate_default=True,
        description="Reverse levels run at --sync-cg for T_mean and CoV against R (none: '').",
    )
    sync_c_g: Annotated[float, Option("--sync-cg")] = Field(
        2.0, description="C_g at which synchronised and spaced starts are compared."
    )
    fit_range: Annotated[tuple[float, float], Option("--fit", options.level_range)] = Field(
        "1,2", validate_default=True, description="C_g range of the linear fits: LO,HI."
    )
    rtt_ms: Rtt = Field("20ms", validate_default=True)
    repeat: Annotated[int, Option("--repeat")] = Field(
        2, ge=1, le=100, description="Repetitions per point."
    )
    transfer_time: Annotated[float, Option("--transfer-time"), Field(exclude=True)] = Field(
        90.0,
        description="Seconds one transfer takes alone at C_a (sets the volume); long "
        "enough for many congestion cycles per transfer.",
    )
    scale_factor: ScaleFactor = None
    capacity: Capacity = None
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")
