"""The report of `itb study rtt-sweep`: the points' table and, per flow count, the mean
goodput and Jain's index against the RTT (RR-6244 Figures 5 and 6)."""

from __future__ import annotations

from pathlib import Path

from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.study.rtt_sweep.args import RttSweepArgs
from itb.study.rtt_sweep.cells import RttSweepCell
from itb.study.rtt_sweep.results import Point, Results
from itb.sweep.index import SweepIndex


def against_rtt(res: Results, path: Path, what: str, label: str) -> Path | None:
    """One panel per flow count, one line per congestion control: `what` of the points
    ("mean_share" or "jain") against the RTT, bars the 95 % interval."""
    counts = sorted({p.flows for p in res.points})
    if not any(getattr(p, what) is not None for p in res.points):
        return None
    fig, axes = plt.subplots(1, len(counts), figsize=(5 * len(counts), 4), squeeze=False)
    for ax, n in zip(axes[0], counts):
        for cc in dict.fromkeys(p.cc for p in res.points):
            pts: list[Point] = sorted(
                (p for p in res.points if p.cc == cc and p.flows == n and getattr(p, what)),
                key=lambda p: p.rtt_ms,
            )
            ax.errorbar(
                [p.rtt_ms for p in pts],
                [getattr(p, what) for p in pts],
                yerr=[getattr(p, f"{what}_ci95") or 0 for p in pts],
                fmt="o-",
                capsize=3,
                label=cc,
            )
        ax.set_xscale("log")
        ax.set_xlabel("RTT (ms)")
        ax.set_ylabel(label)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{n} flows (C_g = {n / 10:g})")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save_figure(fig, path)


def build(out: Path, index: SweepIndex[RttSweepCell], args: RttSweepArgs, res: Results) -> Path:
    """<out>/report/report.html: the points' table and the two figures."""
    figs = figures(
        out,
        [
            (
                lambda p: against_rtt(res, p, "mean_share", "mean goodput / C_a"),
                "goodput.png",
                "Mean goodput of the flows over the window, as a share of C_a, against the "
                "RTT (bars: 95 % interval over repetitions; RR-6244 Figure 5)",
            ),
            (
                lambda p: against_rtt(res, p, "jain", "Jain's index of the goodputs"),
                "fairness.png",
                "Jain's index of the flows' goodputs against the RTT (RR-6244 Figure 6)",
            ),
        ],
    )
    return study_report(__package__, out, index=index, args=args, res=res, figs=figs)
