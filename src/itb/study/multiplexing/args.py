"""The arguments of `itb study multiplexing`: protocols, aggregation levels, the
congestion and reverse levels, the path, and the scale to this testbed."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from itb.errors import ScenarioError
from itb.study import options
from itb.study.args import Option, OutDir, Seed
from itb.study.bulk import MAX_SPAN, STUDY_DIR, Capacity, MaxSpan, Rtt, Scaled, ScaleFactor

MAX_K = 100  # sources per direction stay single transfers up to C_g·K = 200


def levels_k(text: str, flag: str) -> tuple[int, ...]:
    """Aggregation levels K, comma-separated, increasing, 1 to MAX_K."""
    try:
        ks = tuple(int(p) for p in text.split(","))
    except ValueError:
        raise ScenarioError(None, flag, f"{text!r}: give whole numbers, e.g. 1,10") from None
    if not ks or any(not 1 <= k <= MAX_K for k in ks) or list(ks) != sorted(set(ks)):
        raise ScenarioError(None, flag, f"{text!r}: increasing levels of 1 to {MAX_K}")
    return ks


class MultiplexingArgs(Scaled):
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "cubic", validate_default=True, description="Congestion controls (the document's CUBIC)."
    )
    ks: Annotated[tuple[int, ...], Option("--k", levels_k)] = Field(
        "1,10",
        validate_default=True,
        description="Aggregation levels K = C / C_a (the document's 2 flows on 1 Gbit/s and "
        "20 on 10 Gbit/s at C_g 2: K = 1 and 10).",
    )
    c_g: Annotated[float, Option("--cg")] = Field(
        2.0, gt=0.0, le=10.0, description="Congestion level C_g (forward sources' C_a over C)."
    )
    r: Annotated[float, Option("--r")] = Field(
        1.5, ge=0.0, le=10.0, description="Reverse level R (reverse sources' C_a over C)."
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
