"""The results of `itb study rtt-sweep`, typed (results.json, `format_version` checked on
reading): per point (congestion control, flows, RTT) the flows' mean goodput over the
window, as bit/s and as a share of C_a, Jain's index of their goodputs and the link's
utilisation by them, each the mean over repetitions ± its 95 % Student-t half-width
(none from one repetition)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from itb.analysis.results import VersionedResults

FORMAT_VERSION = 1


class Repetition(BaseModel):
    """One repetition of a point: its flows' goodputs over the window."""

    model_config = ConfigDict(frozen=True)
    repetition: int
    goodputs_bps: list[float]  # per flow, f1 first (0: nothing received in the window)
    mean_share: float  # mean goodput / C_a
    jain: float | None  # None: fewer than 2 flows
    utilisation: float  # Σ goodput / C


class Point(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    cc: str
    flows: int
    rtt_ms: float
    c_g: float  # flows × C_a / C
    repetitions: list[Repetition]
    failed_repetitions: int
    mean_goodput_bps: float | None
    mean_share: float | None  # of C_a
    mean_share_ci95: float | None
    jain: float | None
    jain_ci95: float | None
    utilisation: float | None
    utilisation_ci95: float | None


class Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    capacity_bps: int
    access_bps: float
    window_s: float  # seconds measured
    points: list[Point]
