"""The report of `itb study response-function`: the fits against the published response
functions (table and log-log figure), and the measured decreases β."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itb.cc.published import nominal_beta
from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.study.response_function.args import ResponseArgs
from itb.study.response_function.cells import ResponseCell
from itb.study.response_function.results import Event, Fit, Point, Results
from itb.sweep.index import SweepIndex


def loglog(points: list[Point], fits: list[Fit], path: Path) -> Path | None:
    """Window (rate in MSS per RTT) vs loss: measured points, fitted lines (solid) and
    the published response functions (dashed)."""
    pts = [p for p in points if p.window]
    if not pts:
        return None
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for f in fits:
        mine = [p for p in pts if p.cc == f.cc]
        if not mine:
            continue
        ps = np.array([p.p_fit for p in mine])
        dots = ax.loglog(ps, [p.window for p in mine], "o", label=f.cc)[0]
        xs = np.geomspace(ps.min() / 1.5, ps.max() * 1.5, 30)
        colour = dots.get_color()
        if f.c is not None and f.d is not None:
            ax.loglog(
                xs,
                f.c / xs**f.d,
                "-",
                color=colour,
                lw=1,
                label=f"fit {f.cc}: {f.c:.3g}/p^{f.d:.3f}",
            )
        if f.c_published is not None and f.d_published is not None:
            ax.loglog(
                xs,
                f.c_published / xs**f.d_published,
                "--",
                color=colour,
                lw=1,
                label=f"published {f.cc}: {f.c_published:g}/p^{f.d_published:g}",
            )
    ax.set_xlabel("packet loss rate p (applied by the link over the measured span)")
    ax.set_ylabel("rate in MSS per RTT (average window, segments)")
    ax.set_title("response functions: measured (dots, solid fits) and published (dashed)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3, which="both")
    return save_figure(fig, path)


def decreases(events: list[Event], ccs: list[str], path: Path) -> Path | None:
    """Each congestion event's β against the window it began at, with the nominal β."""
    if not events:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for cc in ccs:
        ev = [e for e in events if e.cc == cc]
        if not ev:
            continue
        w = np.array([e.cwnd_before for e in ev])
        dots = ax.semilogx(w, [e.beta for e in ev], ".", alpha=0.35, label=f"{cc} (measured)")[0]
        ws = np.geomspace(w.min(), w.max(), 40)
        nominal = [nominal_beta(cc, x) for x in ws]
        if all(v is not None for v in nominal):
            ax.semilogx(ws, nominal, "--", color=dots.get_color(), lw=1.2, label=f"{cc} nominal")
    ax.set_xlabel("window before the congestion event (segments)")
    ax.set_ylabel("β = 1 − cwnd_after / cwnd_before")
    ax.set_title("multiplicative decrease per congestion event")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3, which="both")
    return save_figure(fig, path)


def build(out: Path, index: SweepIndex[ResponseCell], args: ResponseArgs, res: Results) -> Path:
    """<out>/report/report.html: the fits, the points and the figures."""
    figs = figures(
        out,
        [
            (
                lambda p: loglog(res.points, res.fits, p),
                "response-loglog.png",
                "Response functions: rate in MSS/RTT against loss, log-log",
            ),
            (
                lambda p: decreases(res.events, list(args.ccs), p),
                "decrease.png",
                "Multiplicative decrease β of every congestion event after the warm-up",
            ),
        ],
    )
    return study_report(
        __package__, out, index=index, args=args, points=res.points, fits=res.fits, figs=figs
    )
