"""Figures of the predictability study's report (RR-6256's figures 5–19 have these forms)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itb.analysis.statistics import floats
from itb.draw.plot import plt, save_figure
from itb.study.predictability.results import Fit, Point, Spacing


def _series(points: list[Point], spacing_s: float) -> dict[tuple, list[Point]]:
    out: dict[tuple, list[Point]] = {}
    for p in points:
        if p.spacing_s == spacing_s and p.t_mean is not None:
            out.setdefault((p.cc, p.reverse), []).append(p)
    return {k: sorted(v, key=lambda p: p.c_g) for k, v in out.items()}


def _label(cc: str, reverse) -> str:
    return f"{cc}, R {reverse}"


def _fit_label(f: Fit) -> str:
    r2 = "–" if f.r2 is None else f"{f.r2:.3f}"
    if f.model == "quadratic":
        a, b, c = f.coef
        return f"quadratic fit {f.cc}: {a:.2f}·C_g² {b:+.2f}·C_g {c:+.2f}, R² {r2}"
    return f"fit {f.cc}: {f.a:.2f}·C_g {f.b:+.2f}, R² {r2}"


def tmean_vs_cg(points: list[Point], fits: list[Fit], spacing_s: float, path: Path) -> Path | None:
    series = _series(points, spacing_s)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    ideal = sorted({(p.c_g_realised, p.ideal_t_mean_s) for pts in series.values() for p in pts})
    for (cc, r), pts in series.items():
        x = [p.c_g_realised for p in pts]  # where the fit puts them
        line = ax.errorbar(
            x,
            floats(p.t_mean for p in pts),
            yerr=[p.t_mean_ci95 or 0 for p in pts],
            fmt="o",
            capsize=3,
            label=_label(cc, r),
        )
        for f in fits:
            if f.cc == cc and f.reverse == r:
                xs = np.linspace(*f.c_g_range, 30)
                ax.plot(
                    xs,
                    np.polyval(f.coef, xs),
                    color=line[0].get_color(),
                    lw=1,
                    ls="-" if f.model == "linear" else ":",
                    label=_fit_label(f),
                )
    if ideal:
        by_cg: dict[float, float] = {}
        for cg, t in ideal:
            by_cg.setdefault(cg, t)
        cgs = sorted(by_cg)
        ax.plot(
            cgs,
            [by_cg[cg] for cg in cgs],
            "k--",
            lw=1.2,
            label="ideal TCP (fluid fair share, no slow start, no loss)",
        )
    ax.set_xlabel("congestion level C_g realised (round(C_g·K)/K)")
    ax.set_ylabel("mean completion time T_mean (s)")
    ax.set_title("T_mean vs congestion level, least-squares fits and the ideal TCP")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def cov_vs_cg(points: list[Point], spacing_s: float, path: Path) -> Path | None:
    series = _series(points, spacing_s)
    series = {k: [p for p in v if p.cov is not None] for k, v in series.items()}
    if not any(series.values()):
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for (cc, r), pts in series.items():
        ax.plot(
            [p.c_g_realised for p in pts],
            floats(p.cov for p in pts) * 100,
            "o-",
            label=_label(cc, r),
        )
    ax.set_xlabel("congestion level C_g realised")
    ax.set_ylabel("CoV of completion time (%)")
    ax.set_title("predictability: CoV = σ_T / T_mean vs congestion level")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def _vs_r(
    points: list[Point], spacing_s: float, value, ylabel: str, title: str, path: Path
) -> Path | None:
    pts = [p for p in points if p.spacing_s == spacing_s and value(p) is not None]
    if len({p.r_level for p in pts}) < 2:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for cc, cg in sorted({(p.cc, p.c_g) for p in pts}):
        s = sorted((p for p in pts if p.cc == cc and p.c_g == cg), key=lambda p: p.r_level)
        if len({p.r_level for p in s}) < 2:
            continue  # a level swept over C_g only
        ax.plot([p.r_level for p in s], [value(p) for p in s], "o-", label=f"{cc}, C_g {cg:g}")
    ax.set_xlabel("reverse traffic level R")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def cov_vs_r(points: list[Point], spacing_s: float, path: Path) -> Path | None:
    """CoV against the reverse-traffic level, one line per protocol and C_g."""
    return _vs_r(
        points,
        spacing_s,
        lambda p: None if p.cov is None else p.cov * 100,
        "CoV of completion time (%)",
        "predictability vs reverse traffic",
        path,
    )


def tmean_vs_r(points: list[Point], spacing_s: float, path: Path) -> Path | None:
    """T_mean against the reverse-traffic level (RR-6256 figures 11–16)."""
    return _vs_r(
        points,
        spacing_s,
        lambda p: p.t_mean,
        "mean completion time T_mean (s)",
        "T_mean vs reverse traffic level",
        path,
    )


def spacing_sigma(rows: list[Spacing], path: Path) -> Path | None:
    rows = [r for r in rows if r.sigma_t_sync is not None and r.sigma_t_spaced is not None]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    x = np.arange(len(rows))
    ax.bar(x - 0.2, floats(r.sigma_t_sync for r in rows), 0.4, label="synchronised (0 s)")
    ax.bar(
        x + 0.2,
        floats(r.sigma_t_spaced for r in rows),
        0.4,
        label=f"spaced ({rows[0].spacing_s:.3g} s)",
    )
    ax.set_xticks(x, [r.cc for r in rows])
    ax.set_ylabel("σ_T (s)")
    ax.set_title(f"start spacing and σ_T at C_g {rows[0].c_g:g}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return save_figure(fig, path)
