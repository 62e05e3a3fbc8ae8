"""What `itb profile calibrate` prints at the end, and what it keeps: the fitted lines per
RTT, the transfers left out, and the model, saved where `itb profile predict` and the
profile studies find it once the calibration is complete."""

from __future__ import annotations

from itb.study.profile_calibration.args import CalibrationArgs
from itb.study.profile_calibration.results import CalibrationResults
from itb.study.registry import Line, Shown, Table, num
from itb.sweep.sweep import Outcome


def tables(res: Outcome[CalibrationResults], a: CalibrationArgs) -> list[Shown]:
    r = res.results
    t = Table(
        title=f"{r.mechanism}: goodput = a_g·X + b_g, throughput = a_t·X + b_t ({res.status})",
        columns=["RTT (ms)", "a_g", "b_g (Mbit/s)", "r", "a_t", "b_t (Mbit/s)", "r", "samples"],
    )
    for p in r.model.per_rtt if r.model else []:
        t.rows.append(
            [
                f"{p.rtt_ms:g}",
                num(p.goodput.a),
                num(p.goodput.b / 1e6),
                num(p.goodput.r),
                num(p.throughput.a),
                num(p.throughput.b / 1e6),
                num(p.throughput.r),
                str(p.goodput.n),
            ]
        )
    shown: list[Shown] = [t]
    if r.failed or r.overlapped:
        shown.append(
            Line(
                text=f"{r.failed} transfer(s) failed, {r.overlapped} overlapped the "
                "next (left out)",
                err=True,
            )
        )
    if r.model is not None and res.status == "complete":
        path = a.mechanism.model_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        r.model.save(path)
        shown.append(Line(text=f"model: {path}"))
    return shown
