"""A cell of `itb study profile stage0` as its sweep's index keeps it, by part: a CPU
cell (a mechanism at an RTT, one transfer per input rate), or a cell of the files or
streams part (one way of transferring at full speed) (itb.sweep.index)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from itb.sweep.index import IndexCell


class CpuCell(IndexCell):
    part: Literal["cpu"]
    mechanism: str
    rtt_ms: float
    inputs: dict[str, int]  # transfer id → the input rate (bit/s) its sender is asked


class RateCell(IndexCell):
    part: Literal["files", "streams"]
    label: str  # m2m / d2m / d2d, "GridFTP -p N", "itb-udt"
    mechanism: str  # the congestion control, or "udt"
    streams: int  # GridFTP's parallel streams


# a cell of the study: which one, by its part
Stage0Cell = Annotated[CpuCell | RateCell, Field(discriminator="part")]
