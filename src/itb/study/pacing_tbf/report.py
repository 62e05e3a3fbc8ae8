"""The report of `itb study pacing-vs-tbf`: T over the ideal per pattern and mechanism
(eWAN Figures 8–10), and the token bucket's penalty against pacing with its interval."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.study.pacing_tbf.args import PacingTbfArgs
from itb.study.pacing_tbf.cells import PacingTbfCell
from itb.study.pacing_tbf.results import Results
from itb.sweep.index import SweepIndex


def slowdown_figure(res: Results, path: Path) -> Path | None:
    """One panel per (congestion control, RTT, buffer): T / ideal per pattern, a bar per
    mechanism with its 95 % interval."""
    groups = list(dict.fromkeys((c.cc, c.rtt_ms, c.buffer_bytes) for c in res.cells))
    if not any(c.slowdown is not None for c in res.cells):
        return None
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.8), squeeze=False)
    for ax, (cc, rtt, buf) in zip(axes[0], groups):
        mine = [c for c in res.cells if (c.cc, c.rtt_ms, c.buffer_bytes) == (cc, rtt, buf)]
        patterns = list(dict.fromkeys(c.pattern for c in mine))
        x = np.arange(len(patterns))
        for k, mech in enumerate(("tbf", "pacing")):
            vals = [
                next((c for c in mine if c.pattern == p and c.mechanism == mech), None)
                for p in patterns
            ]
            ax.bar(
                x + (k - 0.5) * 0.38,
                [(v.slowdown or 0) if v else 0 for v in vals],
                0.38,
                yerr=[(v.slowdown_ci95 or 0) if v else 0 for v in vals],
                capsize=3,
                label="token bucket" if mech == "tbf" else "pacing",
            )
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xticks(x, patterns, fontsize=8)
        ax.set_ylabel("T / ideal")
        ax.set_title(f"{cc}, {rtt:g} ms, {buf / 1e6:g} MB buffers", fontsize=9)
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def penalty_figure(res: Results, path: Path) -> Path | None:
    """The token bucket's T over pacing's − 1 against the RTT, per congestion control and
    pattern, bars Fieller's interval at the study's level."""
    pts = [p for p in res.penalties if p.comparison.difference is not None]
    if not pts:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    buffers = len({p.buffer_bytes for p in pts}) > 1
    for cc, pattern, buf in dict.fromkeys((p.cc, p.pattern, p.buffer_bytes) for p in pts):
        mine = sorted(
            (p for p in pts if (p.cc, p.pattern, p.buffer_bytes) == (cc, pattern, buf)),
            key=lambda p: p.rtt_ms,
        )
        d = np.array([100 * (p.comparison.difference or 0) for p in mine])
        lo = [
            d[i] - 100 * p.comparison.difference_ci[0] if p.comparison.difference_ci else 0
            for i, p in enumerate(mine)
        ]
        hi = [
            100 * p.comparison.difference_ci[1] - d[i] if p.comparison.difference_ci else 0
            for i, p in enumerate(mine)
        ]
        ax.errorbar(
            [p.rtt_ms for p in mine],
            d,
            yerr=[lo, hi],
            fmt="o-",
            capsize=3,
            label=f"{cc}, {pattern}" + (f", {buf / 1e6:g} MB" if buffers else ""),
        )
    ax.axhline(0.0, color="k", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("RTT (ms)")
    ax.set_ylabel("T token bucket / T pacing − 1 (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def build(out: Path, index: SweepIndex[PacingTbfCell], args: PacingTbfArgs, res: Results) -> Path:
    """<out>/report/report.html: the cells, the comparisons and the two figures."""
    figs = figures(
        out,
        [
            (
                lambda p: slowdown_figure(res, p),
                "slowdown.png",
                "Mean completion time over the fair ideal, token bucket and pacing (bars: 95 % "
                "interval over repetitions; eWAN Figures 8-10)",
            ),
            (
                lambda p: penalty_figure(res, p),
                "penalty.png",
                "The token bucket's completion time against pacing's, in % (bars: Fieller's "
                "interval at its level: Holm's step or 1 − 0.05/m over the study)",
            ),
        ],
    )
    return study_report(__package__, out, index=index, args=args, res=res, figs=figs)
