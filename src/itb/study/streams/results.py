"""The results of `itb study streams`, typed (results.json, `format_version` checked on
reading): per point (congestion control, streams per node) the nodes' total goodput over
the window, its share of C, the mean per stream and Jain's index of the nodes' goodputs
(the goodput log is per node: its streams together), each the mean over repetitions ±
its 95 % Student-t half-width (none from one repetition)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from itb.analysis.results import VersionedResults

FORMAT_VERSION = 1


class Point(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    cc: str
    streams: int  # per node
    repetitions: int  # that ended ok
    failed_repetitions: int
    total_bps: float | None  # Σ of the nodes' goodputs
    total_bps_ci95: float | None
    utilisation: float | None  # total / C (payload over the wire rate)
    utilisation_ci95: float | None
    stream_mean_bps: float | None  # total / (nodes × streams)
    jain: float | None  # of the nodes' goodputs
    jain_ci95: float | None


class Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    capacity_bps: int
    nodes: int
    window_s: float
    points: list[Point]
