"""The report of `itb study streams`: the points' table and the total goodput and Jain's
index against the streams per node (NXE Table 4)."""

from __future__ import annotations

from pathlib import Path

from itb.analysis.statistics import floats
from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.study.streams.args import StreamsArgs
from itb.study.streams.cells import StreamsCell
from itb.study.streams.results import Results
from itb.sweep.index import SweepIndex


def streams_figure(res: Results, path: Path) -> Path | None:
    pts = [p for p in res.points if p.utilisation is not None]
    if not pts:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for cc in dict.fromkeys(p.cc for p in pts):
        mine = sorted((p for p in pts if p.cc == cc), key=lambda p: p.streams)
        x = [p.streams for p in mine]
        left.errorbar(
            x,
            floats(p.utilisation for p in mine),
            yerr=[p.utilisation_ci95 or 0 for p in mine],
            fmt="o-",
            capsize=3,
            label=cc,
        )
        right.errorbar(
            x,
            floats(p.jain for p in mine),
            yerr=[p.jain_ci95 or 0 for p in mine],
            fmt="o-",
            capsize=3,
            label=cc,
        )
    for ax, what in ((left, "total goodput / C"), (right, "Jain's index of the nodes")):
        ax.set_xscale("log")
        ax.set_xlabel("streams per node")
        ax.set_ylabel(what)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save_figure(fig, path)


def build(out: Path, index: SweepIndex[StreamsCell], args: StreamsArgs, res: Results) -> Path:
    """<out>/report/report.html: the points' table and the figure."""
    figs = figures(
        out,
        [
            (
                lambda p: streams_figure(res, p),
                "streams.png",
                "Total goodput over C and Jain's index of the nodes' goodputs against the "
                "streams per node (bars: 95 % interval over repetitions; NXE Table 4)",
            )
        ],
    )
    return study_report(__package__, out, index=index, args=args, res=res, figs=figs)
