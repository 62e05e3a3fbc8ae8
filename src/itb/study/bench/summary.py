"""What `itb bench` prints: the verdicts first (application × class rows, protocol
columns, each against the reference), then the table, and its `--json` document."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.registry import Line, Shown, Table

if TYPE_CHECKING:  # the analysis (numpy, pandas) is imported when a table is printed
    from itb.analysis.benchmark import BenchComparison, BenchRow, BenchTable
    from itb.study.bench.args import BenchStudyArgs
    from itb.suite.benchmark import BenchArgs
    from itb.suite.realisation import BenchCell
    from itb.sweep.index import SweepIndex
    from itb.sweep.sweep import Outcome

# What the quick benchmark shortens, printed with its table
QUICK_SHORTENS = (
    "quick benchmark: classes B and F of A-L, repetitions until decided within 10 min of "
    "runs (looks at 3, 5, 7, 10; no time limit otherwise), BU transfers of 2 s (not 240 s) "
    "0.25 s apart (not 1 s), PA 8 round trips (the documents' 200); options given "
    "explicitly win"
)


@dataclass
class BenchResult:
    """A benchmark's outcome as it is printed: its table, comparisons and paths."""

    out: Path
    status: str  # complete | incomplete
    rows: list[BenchRow] = field(default_factory=list)
    comparisons: list[BenchComparison] = field(default_factory=list)
    report: Path | None = None
    warnings: list[str] = field(default_factory=list)  # per-flow windows too small to compare
    signal: int | None = None  # the signal that stopped it


def result_of(outcome: Outcome[BenchTable]) -> BenchResult:
    """The benchmark's outcome with the warnings of its cells' windows (its index's)."""
    from itb.suite.realisation import BenchCell
    from itb.sweep.index import SweepIndex, read_index

    index = read_index(outcome.out / "bench.json", SweepIndex[BenchCell])
    return result_from(index, outcome.out, outcome.status, outcome.results, outcome.report,
                       outcome.signal)  # fmt: skip


def result_from(
    index: SweepIndex[BenchCell],
    out: Path,
    status: str,
    table: BenchTable,
    report: Path | None,
    signal: int | None = None,
) -> BenchResult:
    """A benchmark's table and paths, with the warnings of the windows its index records
    (what `itb bench` and `itb report DIR` print)."""
    from itb.suite import windows

    warnings = windows.warnings_of(c.realisation for c in index.cells)
    return BenchResult(out, status, table.rows, table.comparisons, report, warnings, signal)


def bench_document(result: BenchResult, axes: list[str], quick: bool) -> dict:
    """`itb bench --json`: the table's rows (table.json's, a row's class under "class")
    and comparisons, with where they are and what the command ran that is not the
    documents' default (the lines printed under the table)."""
    return {
        "out": result.out,
        "status": result.status,
        "signal": result.signal,
        "rows": result.rows,
        "comparisons": result.comparisons,
        "table": result.out / "table.csv",
        "report": result.report,
        "axes": axes,
        "quick": QUICK_SHORTENS if quick else None,
        "warnings": result.warnings,
    }


def axes_lines(args: BenchArgs, rows: list[BenchRow]) -> list[str]:
    """What the table ran that is not the documents' default, one line per axis."""
    lines = []
    if args.scale.buffer != "bdp":
        queues = sorted({f"{r.cls}: {r.buffer}" for r in rows})
        lines.append(f"bottleneck queue {args.scale.buffer}: {', '.join(queues)}")
    if args.streams != 1:
        lines.append(f"N_s = {args.streams} parallel streams per BU forward source")
    if args.k != 10:
        lines.append(f"K = {args.k} for the data-centre classes")
    if args.rtt_modes_ms:
        lines.append(f"RTT {', '.join(sorted({r.rtt or '' for r in rows}))} for every class")
    if args.scale.access_bps != 1_000_000_000:
        lines.append(f"C_a = {args.scale.access_bps / 1e6:g} Mbit/s in the documents' terms")
    if args.background.kind != "none":
        lines.append(f"background B = {args.background.text} of C on a host pair of its own")
    return lines


def _label(c: BenchComparison) -> str:
    """A comparison's application (and variant) and class, e.g. "BU F"."""
    from itb.analysis.benchmark import group_label

    return group_label(c.app, c.variant, c.cls)


COLOUR = {"faster": "green", "slower": "red", "equivalent": "blue", "inconclusive": "yellow"}


def verdict_cell(c: BenchComparison) -> str:
    """A comparison in a few words: its verdict, difference and interval."""
    diff = f" {100 * c.difference:+.1f} %" if c.difference is not None else ""
    ci = ""
    if c.difference_ci:
        lo, hi = c.difference_ci
        ci = f" [{100 * lo:+.1f}, {100 * hi:+.1f}]"
    return f"[{COLOUR[c.verdict]}]{c.verdict}[/]{diff}{ci}"


def verdict_matrix(comparisons: list[BenchComparison]) -> Table:
    """Application × class rows, protocol columns: each against the reference."""
    from itb.analysis.benchmark import repetitions_compared

    tested = list(dict.fromkeys(c.tested for c in comparisons))
    c0 = comparisons[0]
    rows: dict[str, dict[str, BenchComparison]] = {}
    for c in comparisons:
        rows.setdefault(_label(c), {})[c.tested] = c
    return Table(
        title=f"Which protocol is faster: against {c0.reference}, ±{100 * c0.margin:.0f} % "
        "margin, a 5 % chance of any false verdict over the table",
        columns=["app / class", "reps", *tested],
        right=["reps"],
        rows=[
            [key, str(repetitions_compared(list(by.values())))]
            + [verdict_cell(by[n]) if n in by else "–" for n in tested]
            for key, by in rows.items()
        ],
    )


def shown(result: BenchResult) -> list[Shown]:
    """The verdicts, why each undecided one is, the table, failures, each comparison in a
    sentence, and where the table and the report are."""
    out: list[Shown] = []
    if result.comparisons:
        out.append(verdict_matrix(result.comparisons))
        out += [
            Line(text=f"  {_label(c)} {c.tested}: {c.why_undecided()}")
            for c in result.comparisons
            if c.verdict == "inconclusive"
        ]
    out.append(_table(result))
    for r in result.rows:
        if r.failed or r.failed_repetitions:
            corrupt = f", {r.corrupt} of them with a corrupt window (not used)" if r.corrupt else ""
            out.append(
                Line(
                    text=f"[red]{r.app} {r.cls} {r.cc}: {r.failed_repetitions} failed "
                    f"repetition(s), {r.failed} failed transfer(s){corrupt}[/red] (see the "
                    "cell's run directory under cells/)"
                )
            )
    out += [Line(text=f"{_label(c)}: {c.sentence()}") for c in result.comparisons]
    out.append(Line(text=f"table: {result.out / 'table.csv'}"))
    out.append(Line(text=f"report: {result.report}"))
    return out


COLUMNS = [
    "app",
    "class",
    "protocol",
    "reps",
    "T_mean",
    "T_min",
    "T_max",
    "σ_T",
    "CoV",
    "J pooled",
    "J intra",
    "effic.",
    "util.",
    "scale",
]


def _table(result: BenchResult) -> Table:
    from itb.draw.html import pm

    return Table(
        title=f"ITB benchmark ({result.status}): completion time T in s, "
        "mean over repetitions ± 95 % interval",
        columns=COLUMNS,
        right=COLUMNS[3:],
        rows=[
            [
                r.label,
                r.cls,
                r.cc,
                str(r.repetitions),
                pm(r.t_mean, r.t_mean_ci95),
                pm(r.t_min, r.t_min_ci95),
                pm(r.t_max, r.t_max_ci95),
                pm(r.sigma_t, r.sigma_t_ci95),
                pm(r.cov, r.cov_ci95, 3),
                pm(r.jain, None, 3),
                pm(r.jain_intra, None, 3),
                pm(r.efficiency, None, 3),
                pm(r.utilisation, None, 3),
                f"{r.scale_factor:g}",
            ]
            for r in result.rows
        ],
    )


def conclude(outcome: Outcome[BenchTable], args: BenchStudyArgs) -> list[Shown]:
    """What `itb bench` prints once its table is made: `shown`, what it ran that is not
    the documents' default, what --quick shortened, and the warnings (on stderr)."""
    result = result_of(outcome)
    lines = [*shown(result), *(Line(text=a) for a in axes_lines(args.bench, result.rows))]
    if args.quick:
        lines.append(Line(text=QUICK_SHORTENS))
    return lines + [Line(text=f"[yellow]warning:[/yellow] {w}", err=True) for w in result.warnings]
