"""The report of `itb study crossval`: the comparisons' table and, per measure, the
emulated and simulated repetitions side by side."""

from __future__ import annotations

from pathlib import Path

from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.engine.steal import STEAL_WARN
from itb.study.crossval.args import CrossvalArgs
from itb.study.crossval.cells import CrossvalCell
from itb.study.crossval.results import Results
from itb.study.crossval.summary import cc_shown, difference, value, verdict
from itb.sweep.index import SweepIndex


def sides_figure(res: Results, path: Path) -> Path | None:
    judged = [c for c in res.comparisons if c.emulated.values and c.simulated.values]
    if not judged:
        return None
    cols = min(6, len(judged))
    rows = -(-len(judged) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.2 * cols, 3.0 * rows), squeeze=False)
    for ax, c in zip(axes.flat, judged):
        ax.boxplot([c.emulated.values, c.simulated.values], tick_labels=["emu", "sim"])
        ax.set_title(f"{c.scenario} {c.cc}\n{c.measure}", fontsize=7)
        ax.tick_params(labelsize=7)
    for ax in axes.flat[len(judged) :]:
        ax.set_visible(False)
    fig.tight_layout()
    return save_figure(fig, path)


def build(out: Path, index: SweepIndex[CrossvalCell], args: CrossvalArgs, res: Results) -> Path:
    figs = figures(
        out,
        [(lambda p: sides_figure(res, p), "sides.png",
          "Each measure's repetitions on the testbed (emu) and in ns-3 (sim)")],
    )  # fmt: skip
    return study_report(
        __package__, out, index=index, args=args, res=res, figs=figs,
        value=value, verdict=verdict, difference=difference, cc_shown=cc_shown,
        steal_warn=STEAL_WARN,
    )  # fmt: skip
