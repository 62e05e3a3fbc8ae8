"""Figures of one run, from its tables only: per-flow and aggregate goodput over time,
bottleneck throughput and queue, completion-time distribution."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itb.analysis.rates import aggregate_within, per_transfer_within
from itb.analysis.series import bottleneck_throughput
from itb.draw.plot import plt, save_figure


def goodput_over_time(
    tables: dict,
    repetition: int,
    path: Path,
    profiles: dict | None = None,
    name: str = "",
    capacity_bps: float | None = None,
) -> Path:
    """Goodput per transfer and G(t), as rates over intervals long enough to mean one
    (itb.analysis.rates: a transfer's short last sample joined to the one before; G(t)
    over the shortest bins that keep it within the bottleneck's rate); a transfer with a
    rate profile has its profile drawn dashed in its colour, from its start (the profile
    counts payload, as goodput does)."""
    tr = tables["transfers"]
    tr = tr[tr["repetition"] == repetition]
    samples = tables["samples"]
    samples = samples[samples["repetition"] == repetition]
    s, each_s = per_transfer_within(samples, tr, capacity_bps)
    zero = int(tr["rep_start_ns"].min())
    fig, ax = plt.subplots(figsize=(9, 4.5))
    starts = dict(zip(tr["transfer"], tr["start_ns"]))
    for tid, g in s.groupby("transfer"):
        (line,) = ax.plot(g["t_s"], g["goodput_bps"] / 1e6, lw=0.8, label=str(tid))
        steps, t0 = (profiles or {}).get(tid), starts.get(tid)
        if steps and t0 is not None and np.isfinite(t0):
            ends = [at for at, _r in steps[1:]] + [(zero + g["t_s"].max() * 1e9 - t0) / 1e3]
            xs = [
                (t0 - zero) / 1e9 + u / 1e6 for (at, _r), end in zip(steps, ends) for u in (at, end)
            ]
            ys = [r / 1e6 for _at, r in steps for _ in (0, 1)]
            ax.plot(xs, ys, ls="--", lw=0.8, color=line.get_color())
    G, bin_s = aggregate_within(samples, tr, capacity_bps) if len(s) else (s.iloc[0:0], 0.0)
    if len(G):
        label = f"G(t) forward, {bin_s:g} s bins"
        ax.plot(G["t_s"], G["goodput_bps"] / 1e6, color="black", lw=1.5, label=label)
    ax.set_xlabel("time since the repetition's zero (s)")
    ax.set_ylabel(f"goodput (Mbit/s, per transfer over {each_s:g} s)")
    ax.set_title(_titled(name, f"goodput per transfer and aggregate, repetition {repetition}"))
    n = s["transfer"].nunique()
    if n <= 12:
        ax.legend(fontsize=7, ncol=2)
    else:  # one line per transfer, too many to name: the aggregate named, the rest counted
        handles = [h for h in ax.get_lines() if str(h.get_label()).startswith("G(t)")]
        ax.legend(handles=handles, fontsize=7, title=f"{n} transfers, one line each")
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def _titled(name: str, what: str) -> str:
    return f"{name}: {what}" if name else what


def bottleneck_over_time(
    tables: dict, repetition: int, link: str | None, path: Path, name: str = ""
) -> Path | None:
    b = tables["bottleneck"]
    if b.empty:
        return None
    b = b[b["repetition"] == repetition]
    if link:
        b = b[b["link"] == link]
    if b.empty:
        return None
    zero = int(tables["transfers"].query("repetition == @repetition")["rep_start_ns"].min())
    X = bottleneck_throughput(b, "forward", 0.1, {repetition: zero}, link)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    ax1.plot(X["t_s"], X["throughput_bps"] / 1e6, lw=1)
    ax1.set_ylabel("X(t) forward (Mbit/s)")
    ax1.grid(alpha=0.3)
    fwd = b[b["direction"] == "forward"]
    ax2.plot((fwd["t_ns"] - zero) / 1e9, fwd["queue_bytes"] / 1e3, lw=0.6)
    ax2.set_ylabel("queue (kB)")
    ax2.set_xlabel("time since the repetition's zero (s)")
    ax2.grid(alpha=0.3)
    fig.suptitle(_titled(name, f"bottleneck {link or ''}, repetition {repetition}"))
    return save_figure(fig, path)


def completion_times(tables: dict, path: Path, name: str = "") -> Path | None:
    tr = tables["transfers"]
    tr = tr[(tr["direction"] == "forward") & tr["ok"]]
    if tr.empty:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    reps = sorted(tr["repetition"].unique())
    for r in reps:
        t = tr[tr["repetition"] == r]["completion_s"]
        ax.scatter([r] * len(t), t, s=14)
    ax.set_xticks(reps)
    ax.set_xlabel("repetition")
    ax.set_ylabel("completion time (s)")
    ax.set_title(_titled(name, "completion time of the forward transfers"))
    ax.grid(alpha=0.3)
    return save_figure(fig, path)
