"""What `itb study predictability` prints at the end: the fits of T_mean against C_g, and
σ_T synchronised against spaced."""

from __future__ import annotations

from itb.study.predictability.args import PredictabilityArgs
from itb.study.predictability.results import Results
from itb.study.registry import Line, Shown, Table, num
from itb.sweep.sweep import Outcome


def tables(res: Outcome[Results], a: PredictabilityArgs) -> list[Shown]:
    t = Table(
        title=f"T_mean against realised C_g ({res.status})",
        columns=[
            "protocol",
            "reverse",
            "model",
            "C_g range",
            "coefficients (s)",
            "r",
            "R²",
            "ideal slope (s)",
            "slope / ideal",
            "points",
        ],
    )
    for f in res.results.fits:
        t.rows.append(
            [
                f.cc,
                str(f.reverse),
                f.model,
                "–".join(f"{x:g}" for x in f.c_g_range),
                ", ".join(num(c) for c in f.coef),
                num(f.r),
                num(f.r2),
                num(f.ideal_slope),
                num(f.slope_ratio),
                str(f.n),
            ]
        )
    shown: list[Shown] = [t]
    for s in res.results.spacing:
        shown.append(
            Line(
                text=f"{s.cc} at C_g {s.c_g:g}: σ_T {num(s.sigma_t_sync)} s "
                f"synchronised vs {num(s.sigma_t_spaced)} s with "
                f"{s.spacing_s:.3g} s spacing (the plan alone gives an ideal "
                f"protocol {num(s.ideal_sigma_t_spaced)} s)"
            )
        )
    return shown
