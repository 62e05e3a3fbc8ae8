"""The report of `itb study profile transition`: the cost of a step against its height
and RTT (RR-6874 figure 17), and a close-up of the largest step at the bottleneck."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itb.analysis.statistics import floats
from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.draw.pursuit import SINGLE, rate_series
from itb.study.profile_transition.args import TransitionArgs
from itb.study.profile_transition.cells import TransitionCell
from itb.study.profile_transition.results import TransitionResults
from itb.sweep.index import SweepIndex


def transition_figure(res: TransitionResults, path: Path) -> Path | None:
    rtts = sorted({p.rtt_ms for p in res.points})
    if not rtts:
        return None
    fig, axes = plt.subplots(
        1, len(rtts), figsize=(4.8 * len(rtts), 3.8), squeeze=False, sharey=True
    )
    mechs = list(dict.fromkeys(p.mechanism for p in res.points))
    for ax, rtt in zip(axes[0], rtts):
        for k, mech in enumerate(mechs):
            pts = [
                p
                for p in res.points
                if p.rtt_ms == rtt and p.mechanism == mech and p.cost.mean is not None
            ]
            # a log axis: a cost below 0.1 ms is drawn at 0.1 ms, the lower whisker stops
            # above 0 (costs are not negative)
            y = np.maximum(floats(p.cost.mean for p in pts) * 1000, 0.1)
            half = np.array([(p.cost.ci95 or 0) * 1000 for p in pts])
            ax.errorbar(
                [p.high_bps / 1e6 for p in pts],
                y,
                yerr=[np.minimum(half, y * 0.95), half],
                fmt="o-",
                ms=3,
                capsize=2,
                color=f"C{k}",
                label=mech,
            )
            single = [(p.high_bps / 1e6, v) for p, v in zip(pts, y) if p.cost.n == 1]
            if single:
                ax.plot(*zip(*single), "o", ms=5, mfc="white", mec=f"C{k}", zorder=3)
        ax.set_title(f"RTT {rtt:g} ms", fontsize=9)
        ax.set_xlabel("high rate (Mbit/s)")
        ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    axes[0, 0].set_ylabel("cost of the step (ms, log scale)")
    return save_figure(fig, path)


def transition_closeup(
    out: Path, index: SweepIndex[TransitionCell], a: TransitionArgs, path: Path
) -> Path | None:
    """The largest step of every cell, repetition 1: the 1 ms wire rate (and its 10 ms
    mean) from 0.1 s before to 0.6 s after the date, against the step; one panel per
    mechanism and RTT."""
    h = max(a.heights_bps)
    tid = f"h{a.heights_bps.index(h) + 1}"  # one transfer per height
    t_step = a.low_hold_s
    cells = index.cells
    rtts = sorted({c.rtt_ms for c in cells})
    mechs = list(dict.fromkeys(c.mechanism for c in cells))
    fig, axes = plt.subplots(
        len(mechs),
        len(rtts),
        figsize=(4.8 * len(rtts), 2.4 * len(mechs)),
        squeeze=False,
        sharex=True,
        sharey=True,
    )
    drew = False
    for i, mech in enumerate(mechs):
        for j, rtt in enumerate(rtts):
            ax = axes[i, j]
            cell = next((c for c in cells if c.mechanism == mech and c.rtt_ms == rtt), None)
            series = rate_series(out, cell, 1, bin_s=0.001, transfer=tid) if cell else None
            if series is not None:
                t, rate = series.t, series.rate
                sel = (t >= t_step - 0.1) & (t <= t_step + 0.6)
                x, y = t[sel] - t_step, rate[sel]
                ax.plot(x, y, lw=0.5, color=f"C{i}", alpha=0.6, label="1 ms")
                n = len(y) // 10 * 10
                if n:
                    ax.plot(
                        x[:n].reshape(-1, 10).mean(axis=1),
                        y[:n].reshape(-1, 10).mean(axis=1),
                        color="k",
                        lw=1,
                        label="10 ms mean",
                    )
                drew = True
            ax.plot(
                [-0.1, 0, 0, 0.6],
                [a.low_bps / 1e6, a.low_bps / 1e6, h / 1e6, h / 1e6],
                "k--",
                lw=0.8,
                label="step (payload)",
            )
            ax.set_title(f"{mech}, RTT {rtt:g} ms", fontsize=8)
            ax.grid(alpha=0.3)
        axes[i, 0].set_ylabel("Mbit/s (wire)")
    axes[0, 0].legend(fontsize=6)
    for ax in axes[-1]:
        ax.set_xlabel(f"time from the {a.low_bps / 1e6:g} → {h / 1e6:g} Mbit/s step (s)")
    return save_figure(fig, path) if drew else None


def build(
    out: Path, index: SweepIndex[TransitionCell], args: TransitionArgs, res: TransitionResults
) -> Path:
    """<out>/report/report.html: the costs' table and figures."""
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
                    lambda p: transition_figure(res, p),
                    "cost.png",
                    "Cost of a low → high step (the largest data deficit against the sender's level, in ms at "
                    f"that level) against the high rate: mean with its 95 % interval ({SINGLE}); log scale, "
                    "a cost under 0.1 ms drawn at 0.1 ms",
                ),
                (
                    lambda p: transition_closeup(out, index, args, p),
                    "closeup.png",
                    "Close-up of the largest step, repetition 1: the bottleneck's 1 ms wire rate",
                ),
            ],
        ),
    )
