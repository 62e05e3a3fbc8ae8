"""`itb study predictability` (INRIA RR-6256, docs/predictability.md): how the mean and
the spread of BU completion times depend on the congestion level C_g, the reverse
traffic level R and the start spacing, per protocol.

Points: for each protocol and reverse level, every C_g of the sweep with the usual
start spacing; and for each protocol, the synchronised case (spacing 0) at one C_g.
Each point is a BU cell on a K = 10 dumbbell (as the report's 1 Gbit/s nodes on a
10 Gbit/s bottleneck), scaled like the benchmark's classes.

Results: T_mean = a·C_g + b fitted per protocol and reverse level (correlation and R²,
the report's tables 1–5), CoV against C_g and against R, the margin over T_mean that
covers 68 % and 95 % of completions, and σ_T synchronised vs spaced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from itb.analysis.cells import forward_completions
from itb.analysis.statistics import fit_linear, margins
from itb.bench import apps, stats
from itb.bench.classes import DATA_CENTRE_K, ItbClass
from itb.bench.scaling import Scale
from itb.bench.sweep import Sweep, SweepCell, digest
from itb.engine import rundir
from itb.errors import ScenarioError

Say = Callable[[str], None]
SYMMETRIC = "sym"


@dataclass(frozen=True)
class StudyArgs:
    ccs: tuple[str, ...]
    c_g: tuple[float, ...]
    reverse: tuple[float | str, ...]  # levels, or "sym" (as many reverse as forward sources)
    spacing_s: float  # the spaced case
    sync_c_g: float  # where synchronised (0 s) starts are compared with spaced ones
    fit_range: tuple[float, float]
    rtt_ms: float
    repeat: int
    seed: int
    scale: Scale

    def key(self) -> dict:
        return {"ccs": list(self.ccs), "c_g": list(self.c_g), "reverse": list(self.reverse),
                "spacing_s": self.spacing_s, "sync_c_g": self.sync_c_g,
                "fit_range": list(self.fit_range), "rtt_ms": self.rtt_ms,
                "repeat": self.repeat, "seed": self.seed, "scale": self.scale.to_json()}


@dataclass(frozen=True)
class Point:
    cc: str
    c_g: float
    reverse: float | str
    spacing_s: float

    @property
    def r_level(self) -> float:
        return self.c_g if self.reverse == SYMMETRIC else float(self.reverse)

    @property
    def name(self) -> str:
        return f"{self.cc}-cg{self.c_g:g}-r{self.reverse}-s{self.spacing_s:g}"


@dataclass
class StudyResult:
    out: Path
    status: str
    points: list[dict] = field(default_factory=list)
    fits: list[dict] = field(default_factory=list)
    spacing: list[dict] = field(default_factory=list)
    report: Path | None = None


def parse_levels(text: str, option: str, allow_sym: bool = False) -> tuple:
    out = []
    for part in (p.strip() for p in text.split(",")):
        if allow_sym and part.lower() in (SYMMETRIC, "symmetric"):
            out.append(SYMMETRIC)
            continue
        try:
            v = float(part)
        except ValueError:
            raise ScenarioError(None, option, f"{part!r} is not a number"
                                              + (" or 'sym'" if allow_sym else ""))
        if not (0 <= v <= 10):
            raise ScenarioError(None, option, f"{part} is outside 0–10")
        out.append(v)
    if len(set(out)) != len(out):
        raise ScenarioError(None, option, f"a level is repeated in {text!r}")
    return tuple(out)


def points_of(a: StudyArgs) -> list[Point]:
    pts = [Point(cc, cg, r, a.spacing_s) for cc in a.ccs for r in a.reverse for cg in a.c_g]
    if a.spacing_s != 0:
        first_r = a.reverse[0]
        pts += [Point(cc, a.sync_c_g, first_r, 0.0) for cc in a.ccs]
        if a.sync_c_g not in a.c_g:  # its spaced counterpart
            pts += [Point(cc, a.sync_c_g, first_r, a.spacing_s) for cc in a.ccs]
    return pts


def _class_of(p: Point, rtt_ms: float) -> ItbClass:
    return ItbClass("P", DATA_CENTRE_K, rtt_ms, p.c_g, p.r_level,
                    f"predictability point C_g {p.c_g:g}, R {p.reverse}")


def sweep_of(a: StudyArgs, out: Path) -> Sweep:
    cells = []
    for p in points_of(a):
        cls = _class_of(p, a.rtt_ms)
        if cls.forward_sources < 1:
            raise ScenarioError(None, "--cg", f"C_g {p.c_g:g} gives no source at K = {DATA_CENTRE_K}")
        cell = apps.Cell("BU", cls, p.cc)
        cs = a.scale.of(cls)
        g = apps.bulk(cell, cs, p.spacing_s, cap_start_span=False)
        g.doc["experiment"].update(repetitions=a.repeat, seed=a.seed, name=f"pred-{p.name}")
        g.doc["testbed"]["name"] = f"pred-{p.name}"[:64]
        cells.append(SweepCell(p.name, g.doc, {
            "cc": p.cc, "c_g": p.c_g, "reverse": p.reverse, "r_level": p.r_level,
            "spacing_s": p.spacing_s, "realisation": g.realisation | {"scale": cs.to_json()}}))
    return Sweep(out, "predictability", a.key(), cells, a.repeat, a.seed)


def default_out(a: StudyArgs, root: Path = Path("runs")) -> Path:
    return root / f"predictability-{digest(a.key())}"


def run_study(a: StudyArgs, out: Path, say: Say = print, tick: Say = lambda s: None) -> StudyResult:
    sweep = sweep_of(a, out)
    sweep.open()
    status = sweep.run(say, tick)
    res = StudyResult(out, status)
    res.points, res.fits, res.spacing = analyse(sweep, a)
    from itb.report.study import build_study_report

    res.report = build_study_report(out, sweep.state, res.points, res.fits, res.spacing)
    return res


def analyse(sweep: Sweep, a: StudyArgs) -> tuple[list[dict], list[dict], list[dict]]:
    points = []
    for c in sweep.state["cells"]:
        m = sweep.metrics(c)
        reps = stats.per_repetition(m) if m else []
        row = {k: c[k] for k in ("name", "cc", "c_g", "reverse", "r_level", "spacing_s")}
        point = Point(c["cc"], c["c_g"], c["reverse"], c["spacing_s"])
        row["c_g_realised"] = _class_of(point, a.rtt_ms).c_g_realised
        row["repetitions"] = len(reps)
        for k in ("t_mean", "sigma_t", "cov", "t_min", "t_max"):
            row[k], row[f"{k}_ci95"] = stats.mean_ci(r[k] for r in reps)
        times = forward_completions(sweep.out, c)
        mg = margins(times) if times else None
        row["transfers"] = len(times)
        row["margin68_s"] = mg and mg["m68_s"]
        row["margin95_s"] = mg and mg["m95_s"]
        points.append(row)
    fits = []
    lo, hi = a.fit_range
    for cc in a.ccs:
        for r in a.reverse:
            sel = [p for p in points if p["cc"] == cc and p["reverse"] == r
                   and p["spacing_s"] == a.spacing_s and p["t_mean"] is not None
                   and lo - 1e-9 <= p["c_g"] <= hi + 1e-9]
            if len(sel) >= 2:
                # against the realised level, not the nominal one
                f = fit_linear([p["c_g_realised"] for p in sel], [p["t_mean"] for p in sel])
                fits.append({"cc": cc, "reverse": r, "c_g_range": [lo, hi], "x": "realised C_g",
                             **f})
    spacing = []
    for cc in a.ccs:
        pair = {p["spacing_s"]: p for p in points if p["cc"] == cc and p["c_g"] == a.sync_c_g
                and p["reverse"] == a.reverse[0]}
        if 0.0 in pair and a.spacing_s in pair and a.spacing_s != 0:
            s0, s1 = pair[0.0], pair[a.spacing_s]
            spacing.append({"cc": cc, "c_g": a.sync_c_g, "sigma_t_sync": s0["sigma_t"],
                            "sigma_t_spaced": s1["sigma_t"], "t_mean_sync": s0["t_mean"],
                            "t_mean_spaced": s1["t_mean"], "spacing_s": a.spacing_s})
    pd.DataFrame(points).to_csv(sweep.out / "points.csv", index=False)
    rundir.write_json(sweep.out / "results.json", {"points": points, "fits": fits,
                                                   "spacing": spacing})
    return points, fits, spacing

