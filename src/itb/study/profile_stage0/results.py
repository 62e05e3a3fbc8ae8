"""The results of `itb study profile stage0` (INRIA RR-6874 §4), typed: the endpoints'
CPU per input rate, and the goodput of GridFTP from memory or disk and with parallel
streams, and of UDT, at full speed."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from itb.analysis.pursuit import FORMAT_VERSION, Spread
from itb.analysis.results import VersionedResults


class CpuPoint(BaseModel):
    """CPU of the endpoints at one input rate, in % of one core over the transfer."""

    mechanism: str
    rtt_ms: float
    input_bps: float
    send_cpu_pct: Spread
    recv_cpu_pct: Spread
    goodput_bps: Spread


class RatePoint(BaseModel):
    """The goodput of one way of transferring at full speed."""

    part: str  # "files" or "streams"
    label: str  # m2m / d2m / d2d, "GridFTP -p N", "itb-udt"
    mechanism: str
    streams: int
    goodput_bps: Spread


class Stage0Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    WHAT: ClassVar[str] = "profile stage 0 results"
    DESCRIPTION: ClassVar[str] = "profile stage 0 results"
    capacity_bps: int
    volume: int
    cpu: list[CpuPoint]
    files: list[RatePoint]
    streams: list[RatePoint]
