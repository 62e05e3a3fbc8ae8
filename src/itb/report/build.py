"""`itb report RUN_DIR`: the report of a run (its figures and one HTML file) from what
itb.analysis.run_analysis computes from the raw logs alone."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from itb import rundir
from itb.analysis.run_analysis import analyse_run_dir
from itb.analysis.run_results import RunMetrics
from itb.draw.html import figure, render
from itb.draw.parallel import Job, draw_all
from itb.report import figures
from itb.rundir.records import RunMeta
from itb.scenario.experiment.events import Transfer


def build_report(run: Path) -> Path:
    """Tables, metrics.json (itb.analysis.run_analysis) and the report from the raw logs
    alone."""
    a = analyse_run_dir(run)
    sc, tables, metrics = a.scenario, a.tables, a.metrics
    out = run / "report"
    profiles = {
        e.id: e.profile for e in sc.experiment.events if isinstance(e, Transfer) and e.profile
    }
    jobs: list[Job] = []  # each draws a figure (None: nothing to draw)
    if len(tables["transfers"]):
        link = metrics.context.link
        for r in sorted(int(r) for r in tables["transfers"]["repetition"].unique()):
            gp, bn = out / f"goodput-rep{r:03d}.png", out / f"bottleneck-rep{r:03d}.png"
            jobs.append(
                partial(
                    figures.goodput_over_time,
                    tables,
                    r,
                    gp,
                    profiles,
                    run.name,
                    metrics.context.capacity_bps,
                )  # fmt: skip
            )
            jobs.append(partial(figures.bottleneck_over_time, tables, r, link, bn, run.name))
        jobs.append(
            partial(figures.completion_times, tables, out / "completion-times.png", run.name)
        )
    figs = draw_all(jobs)
    warnings = list(a.meta.warnings)
    for r in range(1, a.meta.repetitions + 1):
        rec = rundir.rep_record(run, r)
        warnings += [f"repetition {r}: {w}" for w in (rec.warnings if rec else [])]
    return write_html(out / "report.html", a.meta, metrics, [f for f in figs if f], warnings)


def analyse_run(run: Path, figures: bool = True) -> RunMetrics:
    """What a run ends with (`RunOptions.analyse`): tables, metrics.json and the report;
    returns the metrics as written. figures=False: tables and metrics.json only (a sweep
    draws a cell's report once, when it stops running it)."""
    if not figures:
        return analyse_run_dir(run).metrics
    build_report(run)
    return RunMetrics.load(run / "metrics.json")


def write_html(
    path: Path,
    meta: RunMeta | dict,
    metrics: RunMetrics,
    figs: list[Path],
    warnings: list[str] | None = None,
) -> Path:
    """One self-contained file: the figures are embedded (and kept as PNG and SVG)."""
    captions = {
        "goodput": "goodput per transfer and aggregate G(t); dashed: a transfer's rate profile",
        "bottleneck": "bottleneck throughput X(t) and queue",
        "completion": "completion times of the forward transfers",
    }
    embedded = [
        figure(
            f,
            next((v for k, v in captions.items() if f.name.startswith(k)), f.stem) + f" ({f.stem})",
        )
        for f in figs
    ]
    return render(
        "run.html.j2",
        path,
        meta=meta,
        metrics=metrics,
        figs=embedded,
        warnings=warnings or [],
        overall_json=metrics.overall.model_dump_json(indent=1),
    )
