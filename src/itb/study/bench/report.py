"""The report of one `itb bench` sweep: the benchmark table, the protocol comparisons,
figures, how each class was scaled and realised (with its sources' windows), and the
testbed's calibration."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from itb import rundir
from itb.analysis.benchmark import (
    BenchComparison,
    BenchRow,
    group_label,
    reference_of,
    repetitions_compared,
)
from itb.analysis.cells import forward_completions
from itb.analysis.compare import MARGIN
from itb.analysis.sequential import design_of
from itb.draw.html import figure, render
from itb.study.bench import report_figures as figures
from itb.suite.realisation import BenchCell, BenchRealisation, WindowRecord
from itb.sweep.index import SweepIndex

if TYPE_CHECKING:
    from itb.analysis.benchmark import BenchTable
    from itb.study.bench.args import BenchStudyArgs


class MatrixRow(BaseModel):
    key: str  # "BU F"
    repetitions: int  # what its verdicts stand on (repetitions_compared)
    cells: list[BenchComparison | None]  # per tested protocol, as Matrix.protocols


class Matrix(BaseModel):
    """The verdicts as a matrix: application × class rows, tested-protocol columns."""

    protocols: list[str] = []
    rows: list[MatrixRow] = []
    margin: float = MARGIN
    undecided: list[tuple[str, BenchComparison, str]] = []  # (row key, comparison, why)


def verdict_matrix(comps: list[BenchComparison]) -> Matrix:
    protocols = list(dict.fromkeys(c.tested for c in comps))
    by: dict[str, dict[str, BenchComparison]] = {}
    for c in comps:
        by.setdefault(group_label(c.app, c.variant, c.cls), {})[c.tested] = c
    return Matrix(
        protocols=protocols,
        rows=[
            MatrixRow(
                key=k,
                repetitions=repetitions_compared(list(v.values())),
                cells=[v.get(p) for p in protocols],
            )
            for k, v in by.items()
        ],
        margin=comps[0].margin if comps else MARGIN,
        undecided=[
            (group_label(c.app, c.variant, c.cls), c, c.why_undecided())
            for c in comps
            if c.verdict == "inconclusive"
        ],
    )


def spread_table(rows: list[BenchRow]) -> list[tuple[str, dict[str, BenchRow]]]:
    """Per application × class, each protocol's row (its CoV and Jain's index)."""
    out: dict[str, dict[str, BenchRow]] = {}
    for r in rows:
        out.setdefault(group_label(r.app, r.variant, r.cls), {})[r.cc] = r
    return list(out.items())


class WindowShown(WindowRecord):
    """A row of "Per-flow windows": a source's window and the applications sharing it."""

    apps: list[str] = []


def _completion_times(
    out: Path, index: SweepIndex[BenchCell]
) -> dict[tuple[str, str], list[float]]:
    return {
        (group_label(c.app, c.variant, c.cls), c.cc): forward_completions(out, c)
        for c in index.cells
    }


def _cell_figures(out: Path, index: SweepIndex[BenchCell]) -> list[dict]:
    """Each cell's goodput-over-time figure of its first repetition, from its own report."""
    figs = []
    for c in index.cells:
        png = out / c.run / "report" / "goodput-rep001.png"
        if png.exists():
            figs.append(figure(png, f"{c.name}: goodput per transfer and G(t), repetition 1"))
    return figs


def _classes(index: SweepIndex[BenchCell]) -> list[tuple[str, BenchRealisation]]:
    """("BU F", its realisation): each application × class once."""
    seen: dict[str, BenchRealisation] = {}
    for c in index.cells:
        seen.setdefault(f"{c.label} {c.cls}", c.realisation)
    return list(seen.items())


def _windows(index: SweepIndex[BenchCell]) -> list[WindowShown]:
    """The per-flow windows the cells recorded (realisation.window), one row per class and
    distinct source (rate and RTT), naming the applications that share it."""
    rows: dict[tuple, WindowShown] = {}
    for c in index.cells:
        w = c.realisation.window
        if w is None:  # a benchmark written before windows were recorded
            continue
        key = (c.cls, w.documents_rate_bps, w.testbed_rate_bps, w.testbed_rtt_ms)
        row = rows.setdefault(key, WindowShown.model_validate(w.model_dump()))
        if c.label not in row.apps:
            row.apps.append(c.label)
    return sorted(rows.values(), key=lambda r: (r.cls, r.apps))


def build_bench_report(
    out: Path, index: SweepIndex[BenchCell], rows: list[BenchRow], comps: list[BenchComparison]
) -> Path:
    rep = out / "report"
    figs = []
    f = figures.tmean_by_protocol(rows, rep / "tmean-by-protocol.png")
    if f:
        figs.append(figure(f, "T_mean per application × class and protocol, 95 % interval"))
    f = figures.completion_by_protocol(_completion_times(out, index), rep / "completion-times.png")
    if f:
        figs.append(figure(f, "completion-time distributions per protocol"))
    cal_path = out / "calibration.json"
    calibration = rundir.read_json(cal_path) if cal_path.exists() else None
    args = index.args
    return render(
        "report.html.j2",
        rep / "report.html",
        package=__package__,
        index=index,
        rows=rows,
        comps=comps,
        reference=reference_of(args) or "",
        looks=design_of(args).looks,
        matrix=verdict_matrix(comps),
        spread=spread_table(rows),
        figs=figs,
        cell_figs=_cell_figures(out, index),
        classes=_classes(index),
        windows=_windows(index),
        calibration=calibration,
    )


def build(
    out: Path, index: SweepIndex[BenchCell], args: BenchStudyArgs, results: BenchTable
) -> Path:
    """The study's report (itb.study.registry.Report): the benchmark's."""
    return build_bench_report(out, index, results.rows, results.comparisons)
