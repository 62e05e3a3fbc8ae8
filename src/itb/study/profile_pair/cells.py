"""A cell of `itb study profile pair` as its sweep's index keeps it: the pair of
mechanisms, the margin, and each flow's planned profile and prediction
(itb.sweep.index)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from itb.sweep.index import IndexCell


class PlannedFlow(BaseModel):
    """One flow of the pair as planned: the inputs its sender is asked, step by step,
    its volume and the model's completion time."""

    model_config = ConfigDict(extra="forbid")
    flow: str  # "A" or "B"
    input_steps: list[tuple[int, int]]  # (µs from the start, input bit/s)
    volume: int  # bytes
    predicted_s: float
    extrapolated: bool  # an input lies beyond the inputs the model was fitted on


class PairCell(IndexCell):
    combo: str  # "nocc-pacing+udt"
    mechanisms: list[str]  # flow A's, flow B's
    margin: float  # m: the share of C left free by both together
    rtt_ms: float
    flows: list[PlannedFlow]  # A, B
