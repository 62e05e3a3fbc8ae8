"""The report of `itb study predictability`."""

from __future__ import annotations

from pathlib import Path

from itb import rundir
from itb.analysis.predictability import Results
from itb.report import study_figures as sf
from itb.report.html import figure, render


def build_study_report(out: Path, state: dict, res: Results) -> Path:
    rep = out / "report"
    spaced = state["args"]["spacing_s"]
    points, fits = res.points, res.fits
    figs = []
    for make, name, caption in (
            (lambda p: sf.tmean_vs_cg(points, fits, spaced, p), "tmean-vs-cg",
             "T_mean vs realised C_g with the fitted models and the ideal TCP (bars: 95 % "
             "interval over repetitions)"),
            (lambda p: sf.cov_vs_cg(points, spaced, p), "cov-vs-cg", "CoV vs C_g"),
            (lambda p: sf.tmean_vs_r(points, spaced, p), "tmean-vs-r",
             "T_mean vs reverse level R"),
            (lambda p: sf.cov_vs_r(points, spaced, p), "cov-vs-r", "CoV vs reverse level R"),
            (lambda p: sf.spacing_sigma(res.spacing, p), "spacing-sigma",
             "σ_T with synchronised and spaced starts")):
        f = make(rep / f"{name}.png")
        if f:
            figs.append(figure(f, caption))
    cal_path = out / "calibration.json"
    return render("study.html.j2", rep / "report.html", state=state, points=points, fits=fits,
                  spacing=res.spacing, figs=figs,
                  calibration=rundir.read_json(cal_path) if cal_path.exists() else None,
                  scale=state["cells"][0]["realisation"]["scale"] if state["cells"] else None,
                  realisation=state["cells"][-1]["realisation"] if state["cells"] else None)
