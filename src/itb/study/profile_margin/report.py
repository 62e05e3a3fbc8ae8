"""The report of `itb study profile margin`: lateness against the margin (RR-6874
figures 11 and 12) and the bottleneck's overshoot."""

from __future__ import annotations

from pathlib import Path

from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.draw.pursuit import SINGLE, lateness_axes, overshoot_figure, spread_line
from itb.study.profile_margin.args import MarginArgs
from itb.study.profile_margin.cells import MarginCell
from itb.study.profile_margin.results import MarginResults
from itb.sweep.index import SweepIndex


def margin_figure(res: MarginResults, path: Path) -> Path | None:
    if not res.points:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, rtt in enumerate(sorted({p.rtt_ms for p in res.points})):
        pts = [p for p in res.points if p.rtt_ms == rtt and p.lateness.mean is not None]
        spread_line(
            ax, [p.margin * 100 for p in pts], [p.lateness for p in pts], f"C{k}", f"RTT {rtt:g} ms"
        )
    lateness_axes(ax, f"{res.mechanism}: constant profile at (1 − m)·C, ~{res.seconds:g} s")
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def build(out: Path, index: SweepIndex[MarginCell], args: MarginArgs, res: MarginResults) -> Path:
    """<out>/report/report.html: the margins needed, the points and the figures."""
    return study_report(
        __package__,
        out,
        index=index,
        args=args,
        res=res,
        figs=figures(
            out,
            [
                (
                    lambda p: margin_figure(res, p),
                    "lateness.png",
                    "Lateness (measured − predicted completion) against the margin: mean over the repetitions "
                    f"with its 95 % interval ({SINGLE}); dotted 1 s, dashed 0.5 s",
                ),
                (
                    lambda p: overshoot_figure(res.points, p, lambda x: f"RTT {x.rtt_ms:g} ms"),
                    "overshoot.png",
                    "The largest 1 ms wire rate at the bottleneck over the mean, while the transfer sent",
                ),
            ],
        ),
    )
