"""The results of `itb profile calibrate`, typed: every sample and the model fitted on
them (results.json; the model also as model.json and where `itb profile predict` finds
it)."""

from __future__ import annotations

from itb.analysis.profile_model import Model, Sample
from itb.analysis.results import VersionedResults


class CalibrationResults(VersionedResults):
    """`itb profile calibrate`'s results.json: every sample and the model fitted on them."""

    FORMAT = 1
    WHAT = "profile calibration results"
    DESCRIPTION = "profile calibration results"

    mechanism: str
    capacity_bps: int
    samples: list[Sample]
    failed: int
    overlapped: int
    model: Model | None  # None until two inputs of one RTT were measured
