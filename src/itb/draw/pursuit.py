"""Figures the reports of the profile-pursuit studies share (RR-6874): means with their 95 %
intervals, lateness axes, the bottleneck's overshoot, a cell's wire rate at the bottleneck
over time and a profile's steps."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from itb.analysis.cells import Cell, bottleneck_link, cell_table
from itb.analysis.pursuit import LATENESS_LIMITS_S
from itb.analysis.series import select_link
from itb.draw.plot import plt, save_figure

SINGLE = "hollow markers: one repetition, no interval"


def spread_line(ax, xs, spreads, color: str, label: str, fmt: str = "o-") -> None:
    """Means with their 95 % intervals; a point from one repetition (no interval) is
    drawn hollow, not as one with a zero-width interval."""
    xs = list(xs)
    ys = [np.nan if s.mean is None else s.mean for s in spreads]
    ax.errorbar(
        xs,
        ys,
        yerr=[s.ci95 or 0 for s in spreads],
        fmt=fmt,
        ms=3,
        capsize=2,
        color=color,
        label=label,
    )
    single = [(x, y) for x, y, s in zip(xs, ys, spreads) if s.n == 1]
    if single:
        ax.plot(*zip(*single), "o", ms=5, mfc="white", mec=color, zorder=3)


def lateness_axes(ax, title: str) -> None:
    for lim, style in zip(LATENESS_LIMITS_S, (":", "--")):
        ax.axhline(lim, color="grey", lw=0.8, ls=style)
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xlabel("margin m (% of C)")
    ax.set_ylabel("lateness (s): measured − predicted")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)


def overshoot_figure(points, path: Path, label) -> Path | None:
    """Largest 1 ms wire rate over the mean, against the margin."""
    groups: dict[str, list] = {}
    for p in points:
        if p.burst.overshoot is not None:
            groups.setdefault(label(p), []).append(p)
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.4))
    for k, (name, pts) in enumerate(groups.items()):
        ax.plot(
            [p.margin * 100 for p in pts],
            [p.burst.overshoot for p in pts],
            "o-",
            ms=3,
            color=f"C{k}",
            label=name,
        )
    ax.set_xlabel("margin m (% of C)")
    ax.set_ylabel("max 1 ms / mean wire rate")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


class RateSeries(NamedTuple):
    """A repetition's wire rate at the bottleneck, per bin."""

    t: np.ndarray  # s from the first transfer's start, or the given one's
    rate: np.ndarray  # wire Mbit/s
    transfers: pd.DataFrame  # the repetition's transfers


def rate_series(
    out: Path, cell: Cell, repetition: int, bin_s: float = 0.01, transfer: str | None = None
) -> RateSeries | None:
    """The repetition's wire rate at the bottleneck; None when it left no logs (not run
    yet, or interrupted) or the transfer never started."""
    bn, tr = cell_table(out, cell, "bottleneck"), cell_table(out, cell, "transfers")
    link = bottleneck_link(out, cell)
    if bn is None or tr is None or link is None:
        return None
    fwd = select_link(bn, "forward", link)
    rows = fwd[fwd["repetition"] == repetition]
    mine = tr[tr["repetition"] == repetition]
    if rows.empty or mine.empty:
        return None
    t0 = float(
        mine["start_ns"].min()
        if transfer is None
        else mine.loc[mine["transfer"] == transfer, "start_ns"].min()
    )
    if not np.isfinite(t0):
        return None
    t = (rows["t_ns"].to_numpy(dtype=float) - t0) / 1e9
    k = np.floor(t / bin_s).astype(int)
    keep = k >= -int(1 / bin_s)
    k, bits = k[keep], rows["bytes"].to_numpy(dtype=float)[keep] * 8
    lo = k.min()
    rate = np.bincount(k - lo, weights=bits) / bin_s / 1e6
    return RateSeries((np.arange(rate.size) + lo) * bin_s, rate, mine)


def steps_line(steps, until: float):
    xs, ys = [], []
    for k, (at, r) in enumerate(steps):
        end = steps[k + 1][0] / 1e6 if k + 1 < len(steps) else until
        xs += [at / 1e6, end]
        ys += [r / 1e6, r / 1e6]
    return xs, ys
