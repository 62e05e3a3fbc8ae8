"""The report of `itb study friendliness`: each group's T, the ratio T_reference / T_tested
per congestion level, and what the tested protocol costs the reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itb.analysis.statistics import floats
from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.study.friendliness.args import FriendlinessArgs
from itb.study.friendliness.cells import FriendlinessCell
from itb.study.friendliness.results import Results
from itb.sweep.index import SweepIndex


def ratio_figure(res: Results, path: Path) -> Path | None:
    pts = [p for p in res.points if p.ratio is not None]
    if not pts:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for cc in sorted({p.tested for p in pts}):
        mine = sorted((p for p in pts if p.tested == cc), key=lambda p: p.c_g_realised)
        ax.errorbar(
            [p.c_g_realised for p in mine],
            floats(p.ratio for p in mine),
            yerr=[p.ratio_ci95 or 0 for p in mine],
            fmt="o-",
            capsize=3,
            label=f"{cc} vs {mine[0].reference}",
        )
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xlabel("congestion level C_g realised")
    ax.set_ylabel("T_reference / T_tested")
    ax.set_title("inter-protocol fairness: above 1, the tested protocol takes more")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax.set_ylim(bottom=min(0.8, float(np.nanmin([p.ratio for p in pts])) * 0.9))
    return save_figure(fig, path)


def build(
    out: Path, index: SweepIndex[FriendlinessCell], args: FriendlinessArgs, res: Results
) -> Path:
    """<out>/report/report.html: the points' table and the ratio figure."""
    figs = figures(
        out,
        [
            (
                lambda p: ratio_figure(res, p),
                "ratio.png",
                "T_reference / T_tested per congestion level (bars: 95 % interval "
                "over repetitions)",
            )
        ],
    )
    return study_report(
        __package__,
        out,
        index=index,
        args=args,
        points=res.points,
        figs=figs,
        scale=index.cells[0].realisation.scale if index.cells else None,
    )
