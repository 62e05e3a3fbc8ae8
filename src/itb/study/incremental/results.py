"""The results of `itb study incremental`, typed (results.json, `format_version` checked
on reading): per cell (congestion control, RTT) and step (k flows active, the second half
of its period measured) the link's utilisation by the flows and Jain's index of their
goodputs, each the mean over repetitions ± its 95 % Student-t half-width (none from one
repetition); and the bottleneck's forward throughput over time, 1 s bins, of each
repetition (the figure's)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from itb.analysis.results import VersionedResults

FORMAT_VERSION = 1


class Step(BaseModel):
    model_config = ConfigDict(frozen=True)
    active: int  # flows started
    ideal: float  # min(active · C_a, C) / C: what paced flows that share fairly would use
    utilisation: float | None  # Σ goodput / C over the step's second half (payload)
    utilisation_ci95: float | None
    jain: float | None  # of the active flows' goodputs (None: one flow)
    jain_ci95: float | None
    newest_share: float | None  # the newest flow's goodput / its fair share min(C_a, C/k)
    newest_share_ci95: float | None


class Series(BaseModel):
    """The bottleneck's forward wire throughput of one repetition, 1 s bins."""

    model_config = ConfigDict(frozen=True)
    repetition: int
    t_s: list[float]  # bin ends, from the repetition's zero
    throughput_bps: list[float]


class CellResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    cc: str
    rtt_ms: float
    repetitions: int  # that ended ok
    failed_repetitions: int
    steps: list[Step]
    series: list[Series]


class Results(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    capacity_bps: int
    access_bps: float
    period_s: float
    cells: list[CellResult]
