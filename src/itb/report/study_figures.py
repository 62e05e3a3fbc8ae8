"""Figures of the predictability study (the report's figures 5–19 have these forms)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itb.report.figures import _save, plt


def _series(points: list[dict], spacing_s: float) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for p in points:
        if p["spacing_s"] == spacing_s and p["t_mean"] is not None:
            out.setdefault((p["cc"], p["reverse"]), []).append(p)
    return {k: sorted(v, key=lambda p: p["c_g"]) for k, v in out.items()}


def _label(cc: str, reverse) -> str:
    return f"{cc}, R {reverse}"


def tmean_vs_cg(points: list[dict], fits: list[dict], spacing_s: float, path: Path) -> Path | None:
    series = _series(points, spacing_s)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    for (cc, r), pts in series.items():
        x = [p.get("c_g_realised", p["c_g"]) for p in pts]  # where the fit puts them
        y = [p["t_mean"] for p in pts]
        e = [p["t_mean_ci95"] or 0 for p in pts]
        line = ax.errorbar(x, y, yerr=e, fmt="o", capsize=3, label=_label(cc, r))
        for f in fits:
            if f["cc"] == cc and f["reverse"] == r:
                xs = np.linspace(*f["c_g_range"], 20)
                r2 = "–" if f["r2"] is None else f"{f['r2']:.3f}"
                ax.plot(xs, f["a"] * xs + f["b"], color=line[0].get_color(), lw=1,
                        label=f"fit {cc}: {f['a']:.2f}·C_g + {f['b']:.2f}, R² {r2}")
    ax.set_xlabel("congestion level C_g realised (round(C_g·K)/K)")
    ax.set_ylabel("mean completion time T_mean (s)")
    ax.set_title("T_mean vs congestion level, least-squares fits")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def cov_vs_cg(points: list[dict], spacing_s: float, path: Path) -> Path | None:
    series = _series(points, spacing_s)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for (cc, r), pts in series.items():
        ax.plot([p["c_g"] for p in pts], [(p["cov"] or 0) * 100 for p in pts], "o-",
                label=_label(cc, r))
    ax.set_xlabel("congestion level C_g")
    ax.set_ylabel("CoV of completion time (%)")
    ax.set_title("predictability: CoV = σ_T / T_mean vs congestion level")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def cov_vs_r(points: list[dict], spacing_s: float, path: Path) -> Path | None:
    """CoV against the reverse-traffic level, one line per protocol and C_g."""
    pts = [p for p in points if p["spacing_s"] == spacing_s and p["cov"] is not None]
    levels = {p["r_level"] for p in pts}
    if len(levels) < 2:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    keys = sorted({(p["cc"], p["c_g"]) for p in pts})
    for cc, cg in keys:
        s = sorted((p for p in pts if p["cc"] == cc and p["c_g"] == cg), key=lambda p: p["r_level"])
        ax.plot([p["r_level"] for p in s], [p["cov"] * 100 for p in s], "o-",
                label=f"{cc}, C_g {cg:g}")
    ax.set_xlabel("reverse traffic level R")
    ax.set_ylabel("CoV of completion time (%)")
    ax.set_title("predictability vs reverse traffic")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def spacing_sigma(rows: list[dict], path: Path) -> Path | None:
    rows = [r for r in rows if r["sigma_t_sync"] is not None and r["sigma_t_spaced"] is not None]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["sigma_t_sync"] for r in rows], 0.4, label="synchronised (0 s)")
    ax.bar(x + 0.2, [r["sigma_t_spaced"] for r in rows], 0.4,
           label=f"spaced ({rows[0]['spacing_s']:g} s)")
    ax.set_xticks(x, [r["cc"] for r in rows])
    ax.set_ylabel("σ_T (s)")
    ax.set_title(f"start spacing and σ_T at C_g {rows[0]['c_g']:g}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return _save(fig, path)
