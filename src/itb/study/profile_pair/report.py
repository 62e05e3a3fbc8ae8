"""The report of `itb study profile pair`: each flow's lateness against the margin
(RR-6874 figures 14 and 15), asked against achieved over time (figure 3) and the pair's
overshoot at the bottleneck."""

from __future__ import annotations

from pathlib import Path

from itb.analysis.cells import cell_table
from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.draw.pursuit import (
    SINGLE,
    lateness_axes,
    overshoot_figure,
    rate_series,
    spread_line,
    steps_line,
)
from itb.study.profile_pair.args import PairArgs
from itb.study.profile_pair.cells import PairCell
from itb.study.profile_pair.results import PairResults
from itb.sweep.index import SweepIndex


def pair_over_time(
    out: Path, index: SweepIndex[PairCell], res: PairResults, path: Path
) -> Path | None:
    """Each combination at its smallest margin of 5 % or more, repetition 1: the pair's
    wire rate at the bottleneck (10 ms bins) against (1 − m)·C, the throughput both asked
    for on the wire together, and each flow's goodput (the receivers' samples, payload)
    against the input it was asked (payload too)."""
    cells = {c.name: c for c in index.cells}
    picks = []
    for combo in dict.fromkeys(p.combo for p in res.points):
        mine = sorted((p for p in res.points if p.combo == combo), key=lambda p: p.margin)
        pick = next((p for p in mine if p.margin >= 0.05), mine[-1])
        cell = cells.get(f"{combo}-m{pick.margin * 100:g}")
        if cell is not None:
            picks.append((pick, cell))
    if not picks:
        return None
    fig, axes = plt.subplots(len(picks), 1, figsize=(9, 3 * len(picks)), squeeze=False)
    cap = res.capacity_bps
    for ax, (p, cell) in zip(axes[:, 0], picks):
        series = rate_series(out, cell, 1)
        if series is None:
            continue
        t, rate, transfers = series
        ax.plot(t, rate, lw=0.6, color="0.4", label="pair, bottleneck (wire, 10 ms)")
        until = float(t.max())
        want = (1 - p.margin) * cap / 1e6
        ax.axhline(want, color="k", lw=0.8, ls=":", label="(1 − m)·C: both wanted together")
        samples = cell_table(out, cell, "samples")
        for k, f in enumerate(p.flows):
            xs, ys = steps_line(f.input_steps, until)
            ax.plot(xs, ys, color=f"C{k}", lw=1, ls="--", label=f"{f.flow} asked ({f.mechanism})")
            if samples is not None and "goodput_bps" in samples:
                g = samples[(samples["repetition"] == 1) & (samples["transfer"] == f.flow)]
                g = g.groupby("t_ns", as_index=False)["goodput_bps"].sum()
                if len(g):
                    t0 = float(transfers["start_ns"].min())
                    ax.plot(
                        (g["t_ns"] - t0) / 1e9,
                        g["goodput_bps"] / 1e6,
                        color=f"C{k}",
                        lw=1,
                        label=f"{f.flow} goodput (receiver, 100 ms)",
                    )
        ax.set_title(f"{p.combo}, m = {p.margin * 100:g} %, repetition 1", fontsize=9)
        ax.set_ylabel("Mbit/s")
        ax.set_xlim(-0.5, until)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=2, loc="lower left")
    axes[-1, 0].set_xlabel("time from the start (s)")
    return save_figure(fig, path)


def pair_figure(res: PairResults, path: Path) -> Path | None:
    combos = list(dict.fromkeys(p.combo for p in res.points))
    if not combos:
        return None
    fig, axes = plt.subplots(
        1, len(combos), figsize=(4.5 * len(combos), 3.8), squeeze=False, sharey=True
    )
    for ax, combo in zip(axes[0], combos):
        pts = [p for p in res.points if p.combo == combo]
        for k in range(len(pts[0].flows)):
            ok = [p for p in pts if p.flows[k].lateness.mean is not None]
            f = pts[0].flows[k]
            spread_line(
                ax,
                [p.margin * 100 for p in ok],
                [p.flows[k].lateness for p in ok],
                f"C{k}",
                f"flow {f.flow} ({f.mechanism})",
            )
        lateness_axes(ax, combo)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def build(out: Path, index: SweepIndex[PairCell], args: PairArgs, res: PairResults) -> Path:
    """<out>/report/report.html: the margins needed, each flow's lateness, the figures."""
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
                    lambda p: pair_figure(res, p),
                    "lateness.png",
                    f"Each flow's lateness against the margin: mean with its 95 % interval ({SINGLE}); dotted 1 s, "
                    "dashed 0.5 s",
                ),
                (
                    lambda p: pair_over_time(out, index, res, p),
                    "over-time.png",
                    "Asked against achieved, one repetition: the pair's wire rate at the bottleneck (10 ms bins of "
                    "the emulator's 1 ms log) against (1 − m)·C, and each flow's goodput at its receiver "
                    "against the input it was asked (both payload)",
                ),
                (
                    lambda p: overshoot_figure(res.points, p, lambda x: x.combo),
                    "overshoot.png",
                    "The pair's largest 1 ms wire rate at the bottleneck over its mean",
                ),
            ],
        ),
    )
