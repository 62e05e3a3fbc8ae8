"""The report of `itb study incremental`: per cell the bottleneck's throughput over time
with the fair ideal (RR-6244 Figure 7), and the steps' utilisation and Jain's index."""

from __future__ import annotations

from pathlib import Path

from itb.analysis.fairshare import tcp_payload_share
from itb.analysis.statistics import floats
from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.study.incremental.args import IncrementalArgs
from itb.study.incremental.cells import IncrementalCell
from itb.study.incremental.results import Results
from itb.sweep.index import SweepIndex


def throughput_figure(res: Results, path: Path) -> Path | None:
    """One panel per cell: each repetition's forward wire throughput (1 s bins) over time
    and the fair ideal min(k·C_a, C) as k flows have started, as the frames that carry its
    payload (C_a is a payload rate), both over C."""
    cells = [c for c in res.cells if c.series]
    if not cells:
        return None
    ccs = list(dict.fromkeys(c.cc for c in cells))
    rtts = sorted({c.rtt_ms for c in cells})
    fig, axes = plt.subplots(
        len(rtts), len(ccs), figsize=(5 * len(ccs), 3.2 * len(rtts)), squeeze=False
    )
    for c in cells:
        ax = axes[rtts.index(c.rtt_ms)][ccs.index(c.cc)]
        for s in c.series:
            ax.plot(
                s.t_s,
                [v / res.capacity_bps for v in s.throughput_bps],
                lw=0.9,
                label=f"repetition {s.repetition}",
            )
        xs, ys = [], []
        for k, step in enumerate(c.steps):  # the ideal's payload as the frames carrying it
            wire = min(1.0, step.ideal / tcp_payload_share())
            xs += [k * res.period_s, (k + 1) * res.period_s]
            ys += [wire, wire]
        ax.plot(xs, ys, "k--", lw=0.8, label="fair ideal (wire)")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{c.cc}, RTT {c.rtt_ms:g} ms")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("throughput / C")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    return save_figure(fig, path)


def jain_figure(res: Results, path: Path) -> Path | None:
    """Jain's index of the active flows' goodputs per step, one line per cell."""
    cells = [c for c in res.cells if any(s.jain is not None for s in c.steps)]
    if not cells:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for c in cells:
        pts = [s for s in c.steps if s.jain is not None]
        ax.errorbar(
            [s.active for s in pts],
            floats(s.jain for s in pts),
            yerr=[s.jain_ci95 or 0 for s in pts],
            fmt="o-",
            capsize=3,
            label=f"{c.cc}, {c.rtt_ms:g} ms",
        )
    ax.set_xlabel("flows active")
    ax.set_ylabel("Jain's index of the goodputs")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def build(
    out: Path, index: SweepIndex[IncrementalCell], args: IncrementalArgs, res: Results
) -> Path:
    """<out>/report/report.html: the steps' tables and the two figures."""
    figs = figures(
        out,
        [
            (
                lambda p: throughput_figure(res, p),
                "throughput.png",
                "The bottleneck's forward throughput (wire, 1 s bins) as flows join, over C, "
                "with the fair ideal min(k·C_a, C)/C in frames (RR-6244 Figure 7)",
            ),
            (
                lambda p: jain_figure(res, p),
                "jain.png",
                "Jain's index of the active flows' goodputs per step (second half of each "
                "step; bars: 95 % interval over repetitions)",
            ),
        ],
    )
    return study_report(__package__, out, index=index, args=args, res=res, figs=figs)
