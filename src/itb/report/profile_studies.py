"""Reports of the profile-pursuit studies (`itb study profile margin|pair|transition`):
lateness against margin with 95 % intervals (RR-6874 figures 11, 12, 14, 15), profile
against achieved rate over time from the bottleneck's 1 ms log (figures 13 and 16), and
the transition cost against height and RTT (figure 17)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itb import rundir
from itb.analysis.cells import cell_table
from itb.analysis.pursuit import BOTTLENECK
from itb.analysis.pursuit_studies import (
    LATENESS_LIMITS_S,
    MarginResults,
    PairResults,
    Stage0Results,
    TransitionResults,
)
from itb.analysis.series import select_link
from itb.report.figures import plt, save_figure
from itb.report.html import figure, render

SINGLE = "hollow markers: one repetition, no interval"


def _spread_line(ax, xs, spreads, color: str, label: str, fmt: str = "o-") -> None:
    """Means with their 95 % intervals; a point from one repetition (no interval) is
    drawn hollow, not as one with a zero-width interval."""
    xs = list(xs)
    ys = [np.nan if s.mean is None else s.mean for s in spreads]
    ax.errorbar(xs, ys, yerr=[s.ci95 or 0 for s in spreads], fmt=fmt, ms=3, capsize=2,
                color=color, label=label)
    single = [(x, y) for x, y, s in zip(xs, ys, spreads) if s.n == 1]
    if single:
        ax.plot(*zip(*single), "o", ms=5, mfc="white", mec=color, zorder=3)


def _lateness_axes(ax, title: str) -> None:
    for lim, style in zip(LATENESS_LIMITS_S, (":", "--")):
        ax.axhline(lim, color="grey", lw=0.8, ls=style)
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xlabel("margin m (% of C)")
    ax.set_ylabel("lateness (s): measured − predicted")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)


def margin_figure(res: MarginResults, path: Path) -> Path | None:
    if not res.points:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, rtt in enumerate(sorted({p.rtt_ms for p in res.points})):
        pts = [p for p in res.points if p.rtt_ms == rtt and p.lateness.mean is not None]
        _spread_line(ax, [p.margin * 100 for p in pts], [p.lateness for p in pts], f"C{k}",
                     f"RTT {rtt:g} ms")
    _lateness_axes(ax, f"{res.mechanism}: constant profile at (1 − m)·C, ~{res.seconds:g} s")
    ax.legend(fontsize=8)
    return save_figure(fig, path)


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
        ax.plot([p.margin * 100 for p in pts], [p.burst.overshoot for p in pts], "o-", ms=3,
                color=f"C{k}", label=name)
    ax.set_xlabel("margin m (% of C)")
    ax.set_ylabel("max 1 ms / mean wire rate")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def _rate_series(out: Path, cell: dict, repetition: int, bin_s: float = 0.01,
                 transfer: str | None = None):
    """(t from the first transfer's start, or the given one's (s), wire Mbit/s per bin,
    the repetition's transfers) at the bottleneck."""
    bn, tr = cell_table(out, cell, "bottleneck"), cell_table(out, cell, "transfers")
    if bn is None or tr is None:
        return None, None, None
    fwd = select_link(bn, "forward", BOTTLENECK)
    rows = fwd[fwd["repetition"] == repetition]
    mine = tr[tr["repetition"] == repetition]
    if rows.empty or mine.empty:
        return None, None, None
    t0 = float(mine["start_ns"].min() if transfer is None
               else mine.loc[mine["transfer"] == transfer, "start_ns"].min())
    if not np.isfinite(t0):
        return None, None, None
    t = (rows["t_ns"].to_numpy(dtype=float) - t0) / 1e9
    k = np.floor(t / bin_s).astype(int)
    keep = k >= -int(1 / bin_s)
    k, bits = k[keep], rows["bytes"].to_numpy(dtype=float)[keep] * 8
    lo = k.min()
    rate = np.bincount(k - lo, weights=bits) / bin_s / 1e6
    return (np.arange(rate.size) + lo) * bin_s, rate, mine


def _steps_line(steps, until: float):
    xs, ys = [], []
    for k, (at, r) in enumerate(steps):
        end = steps[k + 1][0] / 1e6 if k + 1 < len(steps) else until
        xs += [at / 1e6, end]
        ys += [r / 1e6, r / 1e6]
    return xs, ys


def pair_over_time(out: Path, state: dict, res: PairResults, path: Path) -> Path | None:
    """Each combination at its smallest margin of 5 % or more, repetition 1: the pair's
    wire rate at the bottleneck (10 ms bins) against (1 − m)·C, the throughput both asked
    for on the wire together, and each flow's goodput (the receivers' samples, payload)
    against the input it was asked (payload too)."""
    cells = {c["name"]: c for c in state["cells"]}
    picks = []
    for combo in dict.fromkeys(p.combo for p in res.points):
        mine = sorted((p for p in res.points if p.combo == combo), key=lambda p: p.margin)
        pick = next((p for p in mine if p.margin >= 0.05), mine[-1])
        picks.append((pick, cells.get(f"{combo}-m{pick.margin * 100:g}")))
    picks = [(p, c) for p, c in picks if c is not None]
    if not picks:
        return None
    fig, axes = plt.subplots(len(picks), 1, figsize=(9, 3 * len(picks)), squeeze=False)
    cap = res.capacity_bps
    for ax, (p, cell) in zip(axes[:, 0], picks):
        t, rate, _tr = _rate_series(out, cell, 1)
        if t is None:
            continue
        ax.plot(t, rate, lw=0.6, color="0.4", label="pair, bottleneck (wire, 10 ms)")
        until = float(t.max())
        want = (1 - p.margin) * cap / 1e6
        ax.axhline(want, color="k", lw=0.8, ls=":", label="(1 − m)·C: both wanted together")
        samples = cell_table(out, cell, "samples")
        for k, f in enumerate(p.flows):
            xs, ys = _steps_line(f.input_steps, until)
            ax.plot(xs, ys, color=f"C{k}", lw=1, ls="--", label=f"{f.flow} asked ({f.mechanism})")
            if samples is not None and "goodput_bps" in samples:
                g = samples[(samples["repetition"] == 1) & (samples["transfer"] == f.flow)]
                g = g.groupby("t_ns", as_index=False)["goodput_bps"].sum()
                if len(g):
                    t0 = float(_tr["start_ns"].min())
                    ax.plot((g["t_ns"] - t0) / 1e9, g["goodput_bps"] / 1e6, color=f"C{k}",
                            lw=1, label=f"{f.flow} goodput (receiver, 100 ms)")
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
    fig, axes = plt.subplots(1, len(combos), figsize=(4.5 * len(combos), 3.8), squeeze=False,
                             sharey=True)
    for ax, combo in zip(axes[0], combos):
        pts = [p for p in res.points if p.combo == combo]
        for k in range(len(pts[0].flows)):
            ok = [p for p in pts if p.flows[k].lateness.mean is not None]
            f = pts[0].flows[k]
            _spread_line(ax, [p.margin * 100 for p in ok], [p.flows[k].lateness for p in ok],
                         f"C{k}", f"flow {f.flow} ({f.mechanism})")
        _lateness_axes(ax, combo)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def transition_figure(res: TransitionResults, path: Path) -> Path | None:
    rtts = sorted({p.rtt_ms for p in res.points})
    if not rtts:
        return None
    fig, axes = plt.subplots(1, len(rtts), figsize=(4.8 * len(rtts), 3.8), squeeze=False,
                             sharey=True)
    mechs = list(dict.fromkeys(p.mechanism for p in res.points))
    for ax, rtt in zip(axes[0], rtts):
        for k, mech in enumerate(mechs):
            pts = [p for p in res.points if p.rtt_ms == rtt and p.mechanism == mech
                   and p.cost.mean is not None]
            # a log axis: a cost below 0.1 ms is drawn at 0.1 ms, the lower whisker stops
            # above 0 (costs are not negative)
            y = np.maximum(np.array([p.cost.mean * 1000 for p in pts]), 0.1)
            half = np.array([(p.cost.ci95 or 0) * 1000 for p in pts])
            ax.errorbar([p.high_bps / 1e6 for p in pts], y, yerr=[np.minimum(half, y * 0.95), half],
                        fmt="o-", ms=3, capsize=2, color=f"C{k}", label=mech)
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


def transition_closeup(out: Path, state: dict, res: TransitionResults, path: Path) -> Path | None:
    """The largest step of every cell, repetition 1: the 1 ms wire rate (and its 10 ms
    mean) from 0.1 s before to 0.6 s after the date, against the step; one panel per
    mechanism and RTT."""
    a = state["args"]
    h = max(a["heights_bps"])
    tid = f"h{a['heights_bps'].index(h) + 1}"  # one transfer per height
    t_step = a["low_hold_s"]
    cells = state["cells"]
    rtts = sorted({c["rtt_ms"] for c in cells})
    mechs = list(dict.fromkeys(c["mechanism"] for c in cells))
    fig, axes = plt.subplots(len(mechs), len(rtts), figsize=(4.8 * len(rtts), 2.4 * len(mechs)),
                             squeeze=False, sharex=True, sharey=True)
    drew = False
    for i, mech in enumerate(mechs):
        for j, rtt in enumerate(rtts):
            ax = axes[i, j]
            cell = next((c for c in cells if c["mechanism"] == mech and c["rtt_ms"] == rtt), None)
            t, rate, _tr = _rate_series(out, cell, 1, bin_s=0.001, transfer=tid) if cell else (None,) * 3
            if t is not None:
                sel = (t >= t_step - 0.1) & (t <= t_step + 0.6)
                x, y = t[sel] - t_step, rate[sel]
                ax.plot(x, y, lw=0.5, color=f"C{i}", alpha=0.6, label="1 ms")
                n = len(y) // 10 * 10
                if n:
                    ax.plot(x[:n].reshape(-1, 10).mean(axis=1), y[:n].reshape(-1, 10).mean(axis=1),
                            color="k", lw=1, label="10 ms mean")
                drew = True
            ax.plot([-0.1, 0, 0, 0.6], [a["low_bps"] / 1e6, a["low_bps"] / 1e6, h / 1e6, h / 1e6],
                    "k--", lw=0.8, label="step (payload)")
            ax.set_title(f"{mech}, RTT {rtt:g} ms", fontsize=8)
            ax.grid(alpha=0.3)
        axes[i, 0].set_ylabel("Mbit/s (wire)")
    axes[0, 0].legend(fontsize=6)
    for ax in axes[-1]:
        ax.set_xlabel(f"time from the {a['low_bps'] / 1e6:g} → {h / 1e6:g} Mbit/s step (s)")
    return save_figure(fig, path) if drew else None


def _render(out: Path, template: str, state: dict, res, made) -> Path:
    rep = out / "report"
    figs = []
    for make, name, caption in made:
        f = make(rep / name)
        if f:
            figs.append(figure(f, caption))
    cal_path = out / "calibration.json"
    return render(template, rep / "report.html", state=state, res=res, figs=figs,
                  calibration=rundir.read_json(cal_path) if cal_path.exists() else None)


def build_margin_report(out: Path, state: dict, res: MarginResults) -> Path:
    return _render(out, "profile_margin.html.j2", state, res, [
        (lambda p: margin_figure(res, p), "lateness.png",
         "Lateness (measured − predicted completion) against the margin: mean over the repetitions "
         f"with its 95 % interval ({SINGLE}); dotted 1 s, dashed 0.5 s"),
        (lambda p: overshoot_figure(res.points, p, lambda x: f"RTT {x.rtt_ms:g} ms"), "overshoot.png",
         "The largest 1 ms wire rate at the bottleneck over the mean, while the transfer sent")])


def build_pair_report(out: Path, state: dict, res: PairResults) -> Path:
    return _render(out, "profile_pair.html.j2", state, res, [
        (lambda p: pair_figure(res, p), "lateness.png",
         f"Each flow's lateness against the margin: mean with its 95 % interval ({SINGLE}); dotted 1 s, "
         "dashed 0.5 s"),
        (lambda p: pair_over_time(out, state, res, p), "over-time.png",
         "Asked against achieved, one repetition: the pair's wire rate at the bottleneck (10 ms bins of "
         "the emulator's 1 ms log) against (1 − m)·C, and each flow's goodput at its receiver "
         "against the input it was asked (both payload)"),
        (lambda p: overshoot_figure(res.points, p, lambda x: x.combo), "overshoot.png",
         "The pair's largest 1 ms wire rate at the bottleneck over its mean")])


def build_transition_report(out: Path, state: dict, res: TransitionResults) -> Path:
    return _render(out, "profile_transition.html.j2", state, res, [
        (lambda p: transition_figure(res, p), "cost.png",
         "Cost of a low → high step (the largest data deficit against the sender's level, in ms at "
         f"that level) against the high rate: mean with its 95 % interval ({SINGLE}); log scale, "
         "a cost under 0.1 ms drawn at 0.1 ms"),
        (lambda p: transition_closeup(out, state, res, p), "closeup.png",
         "Close-up of the largest step, repetition 1: the bottleneck's 1 ms wire rate")])


def cpu_figure(res: Stage0Results, path: Path) -> Path | None:
    """Sender's and receiver's CPU (% of a core) against the input rate (RR-6874 fig. 4)."""
    groups = list(dict.fromkeys((p.mechanism, p.rtt_ms) for p in res.cpu))
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, (mech, rtt) in enumerate(groups):
        pts = sorted((p for p in res.cpu if (p.mechanism, p.rtt_ms) == (mech, rtt)),
                     key=lambda p: p.input_bps)
        x = [p.input_bps / 1e6 for p in pts]
        _spread_line(ax, x, [p.send_cpu_pct for p in pts], f"C{k}", f"{mech}, RTT {rtt:g} ms: sender")
        _spread_line(ax, x, [p.recv_cpu_pct for p in pts], f"C{k}", "receiver", fmt="s--")
    ax.set_xlabel("input rate (Mbit/s)")
    ax.set_ylabel("CPU (% of one core)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    return save_figure(fig, path)


def build_stage0_report(out: Path, state: dict, res: Stage0Results) -> Path:
    return _render(out, "profile_stage0.html.j2", state, res, [
        (lambda p: cpu_figure(res, p), "cpu.png",
         "CPU time of the sending (solid) and receiving (dashed) process over the transfer's time, "
         f"against the input rate: mean with its 95 % interval ({SINGLE})")])
