"""The report of `itb study multiplexing`: the points' table and the latest completion
time and the throughput's swings against K (RR-6244 §4.3.2's comparison)."""

from __future__ import annotations

from pathlib import Path

from itb.analysis.statistics import floats
from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.study.multiplexing.args import MultiplexingArgs
from itb.study.multiplexing.cells import MultiplexingCell
from itb.study.multiplexing.results import Results
from itb.sweep.index import SweepIndex


def k_figure(res: Results, path: Path) -> Path | None:
    pts = [p for p in res.points if p.t_max is not None]
    if not pts:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for cc in dict.fromkeys(p.cc for p in pts):
        mine = sorted((p for p in pts if p.cc == cc), key=lambda p: p.k)
        x = [p.k for p in mine]
        left.errorbar(x, floats(p.t_max for p in mine), yerr=[p.t_max_ci95 or 0 for p in mine],
                      fmt="o-", capsize=3, label=f"{cc} T_max")  # fmt: skip
        left.errorbar(x, floats(p.t_mean for p in mine), yerr=[p.t_mean_ci95 or 0 for p in mine],
                      fmt="s--", capsize=3, label=f"{cc} T_mean")  # fmt: skip
        right.errorbar(x, floats(p.swing for p in mine), yerr=[p.swing_ci95 or 0 for p in mine],
                       fmt="o-", capsize=3, label=cc)  # fmt: skip
    left.set_ylabel("completion time (s)")
    right.set_ylabel("CoV of the 1 s aggregate throughput")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("aggregation level K")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save_figure(fig, path)


def build(
    out: Path, index: SweepIndex[MultiplexingCell], args: MultiplexingArgs, res: Results
) -> Path:
    """<out>/report/report.html: the points' table and the figure."""
    figs = figures(
        out,
        [
            (
                lambda p: k_figure(res, p),
                "multiplexing.png",
                "Latest and mean completion time, and the swings of the aggregate throughput, "
                "against K (bars: 95 % interval over repetitions)",
            )
        ],
    )
    return study_report(__package__, out, index=index, args=args, res=res, figs=figs)
