"""The report of `itb study service`: per cell the deadline misses and the lateness
against the deadline (p50, p99 and the latest), beside the planner's figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.study.service.args import ServiceArgs
from itb.study.service.cells import ServiceCell
from itb.study.service.results import Results
from itb.sweep.index import SweepIndex


def lateness_figure(res: Results, path: Path) -> Path | None:
    cells = [c for c in res.cells if c.late_p50_s is not None]
    if not cells:
        return None
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(cells)), 3.8))
    x = np.arange(len(cells))
    for k, (attr, label) in enumerate(
        (("late_p50_s", "p50"), ("late_p99_s", "p99"), ("late_max_s", "latest"))
    ):
        ax.bar(x + (k - 1) * 0.27, [getattr(c, attr) for c in cells], 0.27, label=label)
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_xticks(x, [f"{c.workload}\n{c.policy} {c.mechanism}" for c in cells], fontsize=8)
    ax.set_ylabel("finish − deadline (s)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def build(out: Path, index: SweepIndex[ServiceCell], args: ServiceArgs, res: Results) -> Path:
    figs = figures(
        out,
        [
            (
                lambda p: lateness_figure(res, p),
                "lateness.png",
                "Each cell's transfers, finish − deadline over every repetition: p50, p99 and "
                "the latest (below 0: before the deadline)",
            )
        ],
    )
    return study_report(__package__, out, index=index, args=args, res=res, figs=figs)
