"""The benchmark report's figures: T_mean per application × class and protocol, and the
completion-time distributions per protocol."""

from __future__ import annotations

from pathlib import Path

from itb.analysis.benchmark import BenchRow, group_label
from itb.analysis.statistics import floats
from itb.draw.plot import plt, save_figure


def tmean_by_protocol(rows: list[BenchRow], path: Path) -> Path | None:
    """Benchmark table as bars: T_mean per application × class, one bar per protocol,
    with the 95 % interval over repetitions."""
    rows = [r for r in rows if r.t_mean is not None]
    if not rows:
        return None
    groups = list(dict.fromkeys(group_label(r.app, r.variant, r.cls) for r in rows))
    ccs = list(dict.fromkeys(r.cc for r in rows))
    width = 0.8 / len(ccs)
    fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(groups) * max(1, len(ccs) / 2)), 4.5))
    for j, cc in enumerate(ccs):
        xs, ys, lo, hi = [], [], [], []
        for r in rows:
            if r.cc == cc and r.t_mean is not None:
                xs.append(groups.index(group_label(r.app, r.variant, r.cls)) + j * width)
                ys.append(r.t_mean)
                half = r.t_mean_ci95 or 0.0
                lo.append(min(half, r.t_mean))  # a time is never below 0: the bar stops there
                hi.append(half)
        ax.bar(xs, floats(ys), width, yerr=[lo, hi], capsize=3, label=cc)
    ax.set_xticks(
        [i + 0.4 - width / 2 for i in range(len(groups))], groups, rotation=30, ha="right"
    )
    ax.set_ylabel("mean completion time T_mean (s)")
    ax.set_title(
        "T_mean per application and class (bars: 95 % interval over repetitions, cut at 0)"
    )
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return save_figure(fig, path)


MIN_BOX_VALUES = 5  # a box (quartiles) from fewer values draws an illusion of spread


def completion_by_protocol(times: dict[tuple[str, str], list[float]], path: Path) -> Path | None:
    """Completion-time distributions: one box per (group, protocol), every transfer of
    every repetition."""
    items = [(k, v) for k, v in times.items() if len(v)]
    if not items:
        return None
    fig, ax = plt.subplots(figsize=(max(7, 0.6 * len(items) + 2), 4.5))
    boxed = [i for i, (_, v) in enumerate(items, 1) if len(v) >= MIN_BOX_VALUES]
    if boxed:
        ax.boxplot([items[i - 1][1] for i in boxed], positions=boxed, showmeans=True)
    for i, (_, v) in enumerate(items, 1):  # too few values for a box: each one drawn
        if len(v) < MIN_BOX_VALUES:
            ax.scatter([i] * len(v), v, s=16, color="black", zorder=3)
    ax.set_xticks(range(1, len(items) + 1), [f"{g}\n{cc}" for (g, cc), _ in items], fontsize=7)
    ax.set_xlim(0.5, len(items) + 0.5)
    ax.set_ylabel("completion time (s)")
    ax.set_title(
        "completion times per protocol (forward transfers; boxes from "
        f"{MIN_BOX_VALUES} values, ▲ mean; fewer: each value)"
    )
    ax.grid(alpha=0.3, axis="y")
    return save_figure(fig, path)
