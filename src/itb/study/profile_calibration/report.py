"""The report of `itb profile calibrate`: the measured samples with the fitted lines
(RR-6874 figures 5-10)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.study.profile_calibration.args import CalibrationArgs
from itb.study.profile_calibration.cells import CalibrationCell
from itb.study.profile_calibration.results import CalibrationResults
from itb.sweep.index import SweepIndex


def _by_rtt(res: CalibrationResults) -> dict[float, list]:
    out: dict[float, list] = {}
    for s in res.samples:
        out.setdefault(s.rtt_ms, []).append(s)
    return {k: sorted(v, key=lambda s: s.input_bps) for k, v in sorted(out.items())}


def rates_figure(res: CalibrationResults, path: Path) -> Path | None:
    """Goodput and mean throughput against the input, per RTT, with the fitted lines."""
    groups = _by_rtt(res)
    if not groups:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    lines = {p.rtt_ms: p for p in (res.model.per_rtt if res.model else [])}
    for ax, what, attr in (
        (axes[0], "goodput", "goodput_bps"),
        (axes[1], "throughput", "throughput_bps"),
    ):
        for k, (rtt, pts) in enumerate(groups.items()):
            x = np.array([s.input_bps for s in pts]) / 1e6
            colour = f"C{k}"
            ax.plot(
                x,
                [getattr(s, attr) / 1e6 for s in pts],
                "o",
                ms=4,
                color=colour,
                label=f"RTT {rtt:g} ms",
            )
            if rtt in lines:
                ln = getattr(lines[rtt], what)
                xs = np.linspace(ln.x_lo, ln.x_hi, 2)
                ax.plot(xs / 1e6, (ln.a * xs + ln.b) / 1e6, "-", lw=1, color=colour)
        top = res.capacity_bps / 1e6
        ax.plot([0, top], [0, top], "k:", lw=0.8, label="y = x")
        ax.set_xlabel("input X (Mbit/s)")
        ax.set_title(f"{what} ({'file bytes / time' if what == 'goodput' else 'wire, bottleneck'})")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("Mbit/s")
    axes[0].legend(fontsize=8)
    return save_figure(fig, path)


def peaks_figure(res: CalibrationResults, path: Path) -> Path | None:
    """Mean and largest 1 ms throughput against the input: the mechanism's bursts."""
    groups = _by_rtt(res)
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, (rtt, pts) in enumerate(groups.items()):
        x = np.array([s.input_bps for s in pts]) / 1e6
        ax.plot(
            x,
            [s.throughput_bps / 1e6 for s in pts],
            "o-",
            ms=3,
            color=f"C{k}",
            label=f"mean, RTT {rtt:g} ms",
        )
        ax.plot(
            x,
            [s.throughput_max_bps / 1e6 for s in pts],
            "^--",
            ms=3,
            color=f"C{k}",
            label=f"max 1 ms, RTT {rtt:g} ms",
        )
    ax.axhline(res.capacity_bps / 1e6, color="k", lw=0.8, ls=":")
    ax.set_xlabel("input X (Mbit/s)")
    ax.set_ylabel("throughput at the bottleneck (Mbit/s)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def coefficients_figure(res: CalibrationResults, path: Path) -> Path | None:
    m = res.model
    if m is None or len(m.per_rtt) < 2:
        return None
    rtt = np.array([p.rtt_ms for p in m.per_rtt])
    xs = np.linspace(rtt.min(), rtt.max(), 2)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for name, vals, line, mk in (
        ("a_g", [p.goodput.a for p in m.per_rtt], m.a_g, "o"),
        ("a_t", [p.throughput.a for p in m.per_rtt], m.a_t, "s"),
    ):
        axes[0].plot(rtt, vals, mk, label=name)
        axes[0].plot(xs, line.a * xs + line.b, "-", lw=0.8)
    for name, vals, line, mk in (
        ("b_g", [p.goodput.b for p in m.per_rtt], m.b_g, "o"),
        ("b_t", [p.throughput.b for p in m.per_rtt], m.b_t, "s"),
    ):
        axes[1].plot(rtt, np.array(vals) / 1e6, mk, label=name)
        axes[1].plot(xs, (line.a * xs + line.b) / 1e6, "-", lw=0.8)
    axes[0].set_ylabel("slope")
    axes[1].set_ylabel("intercept (Mbit/s)")
    for ax in axes:
        ax.set_xlabel("RTT (ms)")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    return save_figure(fig, path)


def build(
    out: Path, index: SweepIndex[CalibrationCell], args: CalibrationArgs, res: CalibrationResults
) -> Path:
    """<out>/report/report.html: the lines per RTT, the model and the figures."""
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
                    lambda p: rates_figure(res, p),
                    "rates.png",
                    "Goodput and mean throughput against the input rate, per RTT; lines: the fits over the "
                    "linear part (inputs up to the model's limit)",
                ),
                (
                    lambda p: peaks_figure(res, p),
                    "peaks.png",
                    "Mean and largest 1 ms throughput at the bottleneck against the input; dotted: the "
                    "link's capacity",
                ),
                (
                    lambda p: coefficients_figure(res, p),
                    "coefficients.png",
                    "The fitted coefficients against RTT, with their lines",
                ),
            ],
        ),
    )
