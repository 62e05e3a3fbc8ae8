"""`itb study predictability` (INRIA RR-6256, docs/predictability.md): how the mean and
the spread of BU completion times depend on the congestion level C_g, the reverse
traffic level R and the start spacing, per protocol.

Points: for each protocol and reverse level, every C_g of the sweep with the usual
start spacing; and for each protocol, the synchronised case (spacing 0) at one C_g.
Each point is a BU cell on a K = 10 dumbbell (as the report's 1 Gbit/s nodes on a
10 Gbit/s bottleneck), scaled like the benchmark's classes.

The planner must not create the effects the study measures: every forward source
starts within `max_span` of one transfer's time (the spacing shrinks to fit), so a
perfectly fair protocol's T_mean stays on C_g·(transfer time) and its σ_T near 0; the
reverse sources start after the forward ones, with the same spacing (RR-6256 §4.3).
Each point carries what the ideal protocol (fluid max-min fair share, no slow start,
no loss) would give on its plan.

Results (itb.analysis.predictability): T_mean = a·C_g + b fitted per protocol and
reverse level against the realised C_g (correlation, R², slope against the ideal one;
quadratic for Scalable as the report does), CoV against C_g and R, the margins over
T_mean that cover 68 % and 95 % of completions, and σ_T synchronised vs spaced.
"""

from __future__ import annotations

import statistics
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from itb.analysis.cells import forward_completions
from itb.analysis.fairshare import ideal_completion_times, source_cap_bps, tcp_payload_share
from itb.analysis.predictability import Point as PointResult
from itb.analysis.predictability import Results, fits_of, spacing_of
from itb.analysis.statistics import margins
from itb.bench import apps, stats
from itb.bench.classes import DATA_CENTRE_K, ItbClass
from itb.bench.scaling import Scale
from itb.bench.sweep import Outcome, Sweep, SweepCell, drive
from itb.errors import ScenarioError
from itb.scenario.units import parse_duration, parse_rate, parse_size

Say = Callable[[str], None]
SYMMETRIC = "sym"
# Forward starts stay within this share of one transfer's time at C_a. With a perfectly
# fair protocol the fluid model then keeps the slope of T_mean against C_g within ~1.5 %
# of the transfer time and CoV under 0.1 % (tests/unit/test_predictability.py); the
# report's own 1 s between ~400 s transfers spreads 20 starts over 4.75 %.
MAX_SPAN = 0.025


@dataclass(frozen=True)
class StudyArgs:
    ccs: tuple[str, ...]
    c_g: tuple[float, ...]
    reverse: tuple[float | str, ...]  # levels, or "sym" (as many reverse as forward sources)
    spacing_s: float  # the spaced case, before the cap
    sync_c_g: float  # where synchronised (0 s) starts are compared with spaced ones
    fit_range: tuple[float, float]
    rtt_ms: float
    repeat: int
    seed: int
    scale: Scale
    max_span: float | None = MAX_SPAN  # of one transfer's time (None: exactly spacing_s apart)
    # T_mean against R: these reverse levels at sync_c_g too (RR-6244 §5: no, non-congesting
    # and congesting reverse traffic are the cases that matter)
    r_levels: tuple[float | str, ...] = (0.0, 0.8, 1.5)

    def key(self) -> dict:
        return {"ccs": list(self.ccs), "c_g": list(self.c_g), "reverse": list(self.reverse),
                "spacing_s": self.spacing_s, "sync_c_g": self.sync_c_g,
                "fit_range": list(self.fit_range), "rtt_ms": self.rtt_ms,
                "repeat": self.repeat, "seed": self.seed, "scale": self.scale.to_json(),
                "max_span": self.max_span, "r_levels": list(self.r_levels)}


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
                                              + (" or 'sym'" if allow_sym else "")) from None
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
    have = {(p.cc, p.c_g, p.reverse, p.spacing_s) for p in pts}
    pts += [Point(cc, a.sync_c_g, r, a.spacing_s) for cc in a.ccs for r in a.r_levels
            if (cc, a.sync_c_g, r, a.spacing_s) not in have]
    return pts


def _class_of(p: Point, rtt_ms: float) -> ItbClass:
    return ItbClass("P", DATA_CENTRE_K, rtt_ms, p.c_g, p.r_level,
                    f"predictability point C_g {p.c_g:g}, R {p.reverse}")


def planned_ideal(doc: dict) -> list[float]:
    """Completion times the ideal protocol would have on a point's plan: the forward
    transfers' starts, volumes and access rates from the scenario, sharing the
    bottleneck's TCP payload rate max-min fairly (no slow start, no loss)."""
    fwd = [t for t in doc["transfer"] if t["id"].startswith("bu.")]
    share = tcp_payload_share()
    # a source's rate is a pacing cap, which Linux applies to the payload (fairshare)
    return ideal_completion_times([parse_duration(t["at"]) / 1e6 for t in fwd],
                                  [parse_size(t["volume"]) for t in fwd],
                                  [source_cap_bps(None, parse_rate(t["rate"]), share)
                                   for t in fwd],
                                  parse_rate(doc["bottleneck"]["rate"]), payload_share=share)


def sweep_of(a: StudyArgs, out: Path) -> Sweep:
    cells = []
    for p in points_of(a):
        cls = _class_of(p, a.rtt_ms)
        if cls.forward_sources < 1:
            raise ScenarioError(None, "--cg", f"C_g {p.c_g:g} gives no source at K = {DATA_CENTRE_K}")
        cell = apps.Cell("BU", cls, p.cc)
        cs = a.scale.of(cls)
        g = apps.bulk(cell, cs, p.spacing_s, max_start_span=a.max_span, reverse_after=True)
        g.doc["experiment"].update(repetitions=a.repeat, seed=a.seed, name=f"pred-{p.name}")
        g.doc["testbed"]["name"] = f"pred-{p.name}"[:64]
        cells.append(SweepCell(p.name, g.doc, {
            "cc": p.cc, "c_g": p.c_g, "reverse": p.reverse, "r_level": p.r_level,
            "spacing_s": p.spacing_s, "spacing_realised_s": g.realisation["spacing_s"],
            "c_g_realised": cls.c_g_realised,
            "realisation": g.realisation | {"scale": cs.to_json()}}))
    return Sweep(out, "predictability", a.key(), cells, a.repeat, a.seed)


def run_study(a: StudyArgs, out: Path, say: Say = print,
              tick: Say = lambda s: None) -> Outcome[Results]:
    from itb.report.build import analyse_run
    from itb.report.study import build_study_report

    return drive(sweep_of(a, out), lambda sw: analyse(sw, a),
                 lambda sw, res: build_study_report(out, sw.state, res), say, tick,
                 analyse_run)


def _point(sweep: Sweep, c: dict) -> PointResult:
    m = sweep.metrics(c)
    reps = stats.per_repetition(m) if m is not None else []
    row: dict = {k: c[k] for k in ("name", "cc", "c_g", "reverse", "r_level", "spacing_s",
                                   "spacing_realised_s", "c_g_realised")}
    with open(sweep.out / c["scenario"], "rb") as f:  # the plan that ran
        ideal = planned_ideal(tomllib.load(f))
    row["ideal_t_mean_s"], row["ideal_sigma_t_s"] = statistics.fmean(ideal), statistics.pstdev(ideal)
    row["repetitions"] = len(reps)
    row["failed"] = sum(r["n_failed"] for r in reps)
    for k in ("t_mean", "sigma_t", "cov", "t_min", "t_max"):
        row[k], row[f"{k}_ci95"] = stats.mean_ci(r[k] for r in reps)
    times = forward_completions(sweep.out, c)
    mg = margins(times) if times else None
    row["transfers"] = len(times)
    row["margin68_s"] = mg and mg["m68_s"]
    row["margin95_s"] = mg and mg["m95_s"]
    return PointResult(**row)


def analyse(sweep: Sweep, a: StudyArgs) -> Results:
    points = [_point(sweep, c) for c in sweep.state["cells"]]
    res = Results(points=points,
                  fits=fits_of(points, a.ccs, a.reverse, a.spacing_s, a.fit_range),
                  spacing=spacing_of(points, a.ccs, a.sync_c_g, a.reverse[0], a.spacing_s))
    pd.DataFrame([p.model_dump() for p in points]).to_csv(sweep.out / "points.csv", index=False)
    res.save(sweep.out / "results.json")
    return res
