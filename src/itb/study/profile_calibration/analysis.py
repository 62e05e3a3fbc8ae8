"""The analysis of `itb profile calibrate` (RR-6874 §3.3.2): per transfer, what its sender
was asked for and what it achieved, from the transfers table and the bottleneck's 1 ms log
(mean goodput = file size / duration; mean and largest instantaneous throughput on the
wire), and the model fitted on them (`itb.analysis.profile_model`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from itb.analysis.cells import bottleneck_link, cell_table
from itb.analysis.profile_model import Sample, fit
from itb.analysis.series import select_link
from itb.study.profile_calibration.args import CalibrationArgs
from itb.study.profile_calibration.cells import CalibrationCell
from itb.study.profile_calibration.results import CalibrationResults
from itb.sweep.sweep import Sweep


@dataclass(frozen=True)
class Measured:
    samples: list[Sample]
    failed: int  # transfers that did not complete
    overlapped: int  # transfers that were still running when the next one began


def wire_rates(rows: pd.DataFrame, lo_ns: int, hi_ns: int) -> tuple[float, float]:
    """Mean and largest wire rate (bit/s) of bottleneck log rows (one link, direction and
    repetition) in (lo, hi]."""
    rows = rows[(rows["t_ns"] > lo_ns) & (rows["t_ns"] <= hi_ns)]
    span = float(rows["interval_s"].sum())
    if rows.empty or span <= 0:
        return float("nan"), float("nan")
    bits = rows["bytes"].to_numpy(dtype=float) * 8
    return float(bits.sum() / span), float(np.max(bits / rows["interval_s"].to_numpy(dtype=float)))


def calibration_samples(
    transfers: pd.DataFrame,
    bottleneck: pd.DataFrame,
    link: str,
    rtt_ms: float,
    inputs: Mapping[str, float],
) -> Measured:
    """One sample per completed transfer named in `inputs` (transfer id → its input
    rate); transfers of one repetition run one after another, and one that overlaps the
    next is left out (counted): the bottleneck then carried both."""
    samples, failed, overlapped = [], 0, 0
    fwd = select_link(bottleneck, "forward", link)
    for rep, tr in transfers[transfers["transfer"].isin(list(inputs))].groupby("repetition"):
        tr = tr.sort_values("start_ns")
        rep_rows = fwd[fwd["repetition"] == rep]
        starts = tr["start_ns"].to_numpy(dtype=float)
        ends = tr["end_ns"].to_numpy(dtype=float)
        for k, row in enumerate(tr.itertuples()):
            if not row.ok or not np.isfinite(row.completion_s):
                failed += 1
                continue
            clash = (k + 1 < len(tr) and ends[k] > starts[k + 1]) or (
                k > 0 and ends[k - 1] > starts[k]
            )
            if clash:
                overlapped += 1
                continue
            mean, peak = wire_rates(rep_rows, int(row.start_ns), int(row.end_ns))
            samples.append(
                Sample(
                    rtt_ms=rtt_ms,
                    input_bps=float(inputs[row.transfer]),
                    goodput_bps=row.bytes * 8 / row.completion_s,
                    throughput_bps=mean,
                    throughput_max_bps=peak,
                )
            )
    return Measured(samples, failed, overlapped)


def analyse(sweep: Sweep[CalibrationCell], a: CalibrationArgs) -> CalibrationResults:
    samples, failed, overlapped = [], 0, 0
    for cell in sweep.index.cells:
        tr = cell_table(sweep.out, cell, "transfers")
        bn = cell_table(sweep.out, cell, "bottleneck")
        link = bottleneck_link(sweep.out, cell)
        if tr is None or bn is None or link is None:
            continue
        m = calibration_samples(tr, bn, link, cell.rtt_ms, cell.inputs)
        samples += m.samples
        failed += m.failed
        overlapped += m.overlapped
    mechanism = a.mechanism.name
    try:
        model = fit(samples, mechanism, a.linear_max * a.capacity_bps)
        model.open_receive_window = a.open_window
    except ValueError:
        model = None
    res = CalibrationResults(
        mechanism=mechanism,
        capacity_bps=a.capacity_bps,
        samples=samples,
        failed=failed,
        overlapped=overlapped,
        model=model,
    )
    res.save(sweep.out / "results.json")
    if model is not None:
        model.save(sweep.out / "model.json")
    return res
