"""The report of `itb study predictability`: the fits with the ideal line, CoV against C_g
and R, T_mean against R, σ_T synchronised against spaced (figures in `report_figures`)."""

from __future__ import annotations

from pathlib import Path

from itb.draw.page import figures, study_report
from itb.study.predictability import report_figures as sf
from itb.study.predictability.args import PredictabilityArgs
from itb.study.predictability.cells import PredictabilityCell
from itb.study.predictability.results import Results
from itb.sweep.index import SweepIndex


def build(
    out: Path, index: SweepIndex[PredictabilityCell], args: PredictabilityArgs, res: Results
) -> Path:
    """<out>/report/report.html: the fits, the points, the spacing and the figures."""
    spaced = args.spacing_s
    points, fits = res.points, res.fits
    figs = figures(
        out,
        [
            (
                lambda p: sf.tmean_vs_cg(points, fits, spaced, p),
                "tmean-vs-cg.png",
                "T_mean vs realised C_g with the fitted models and the ideal TCP (bars: 95 % "
                "interval over repetitions)",
            ),
            (lambda p: sf.cov_vs_cg(points, spaced, p), "cov-vs-cg.png", "CoV vs C_g"),
            (
                lambda p: sf.tmean_vs_r(points, spaced, p),
                "tmean-vs-r.png",
                "T_mean vs reverse level R",
            ),
            (lambda p: sf.cov_vs_r(points, spaced, p), "cov-vs-r.png", "CoV vs reverse level R"),
            (
                lambda p: sf.spacing_sigma(res.spacing, p),
                "spacing-sigma.png",
                "σ_T with synchronised and spaced starts",
            ),
        ],
    )
    cells = index.cells
    return study_report(
        __package__,
        out,
        index=index,
        args=args,
        points=points,
        fits=fits,
        spacing=res.spacing,
        figs=figs,
        scale=cells[0].realisation.scale if cells else None,
        realisation=cells[-1].realisation if cells else None,
    )
