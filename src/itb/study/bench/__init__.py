"""`itb bench` (docs/benchmark.md): application × class × protocol cells, each a
generated scenario, repeated until every protocol's comparison with the reference is
decided (or a fixed number of times), then the verdicts, the table and the report.

A study like the others (its arguments `BenchStudyArgs`, its sweep the benchmark's cells,
its results the table), but for what it prints: its own paths and `--json` document, and
exit status 1 when a run failed (`OwnOutput`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itb.study.bench.args import BenchStudyArgs

if TYPE_CHECKING:
    from itb.analysis.benchmark import BenchTable
    from itb.study.registry import Say, Shown, Study
    from itb.suite.realisation import BenchCell
    from itb.sweep.sweep import Outcome, Sweep


class Bench:
    name = ("bench",)
    kind = "bench"
    rank = 0
    group_help = None  # `itb`'s
    Args = BenchStudyArgs
    help = """Run the ITB benchmark: application × class × protocol, repeated, then print the
    table and write the report.

    Each cell (e.g. `BU-F-cubic`) is a generated scenario run by the engine
    (docs/benchmark.md). Classes are scaled to this testbed: K, C_g, R and the number of
    sources are kept, C, C_a and volumes divided by one factor per class, taken from the
    last `itb calibrate` (or --scale / --capacity); the RTT is kept (--scaling rate) or
    multiplied by the factor (--scaling window). Classes whose sources' windows fall under
    20 segments are warned about. Per application and class, every protocol is compared
    with the reference (--reference): faster, slower, equivalent within ±2 % or
    inconclusive, with a 5 % chance of any false verdict over the whole table. Cells are
    repeated until every comparison of their application and class is decided: rounds
    of one repetition per cell still open (repetition r of every open cell before r+1 of
    any, in a seeded random order), a look at the data after 3, 5, 7, 10, … repetitions,
    at most --max-repeat, or until --budget ends (--repeat N: exactly N, one look).
    The verdicts are printed first, then the table. Ctrl-C stops cleanly; the same
    command resumes without redoing finished runs and takes the same decisions; `itb
    report DIR` rebuilds the table and report from the raw logs. Exit code 0 when every
    run succeeded, 1 when some failed, 130 when interrupted, 2 for bad arguments.
    """

    def plan(self, args: BenchStudyArgs, out: Path, say: Say) -> Sweep[BenchCell]:
        from itb.suite import benchmark, windows

        sweep = benchmark.sweep_of(args.bench, out)
        for w in windows.warnings_of(c.info.realisation for c in sweep.cells):
            say(f"warning: {w}")
        return sweep

    def analyse(self, sweep: Sweep[BenchCell], args: BenchStudyArgs) -> BenchTable:
        from itb.suite.benchmark import summarise

        return summarise(sweep)

    def conclude(self, outcome: Outcome[BenchTable], args: BenchStudyArgs) -> list[Shown]:
        from itb.study.bench.summary import conclude

        return conclude(outcome, args)

    def document(
        self, outcome: Outcome[BenchTable], args: BenchStudyArgs, shown: list[Shown]
    ) -> dict:
        """`itb bench --json` (itb.study.bench.summary.bench_document)."""
        from itb.study.bench.summary import axes_lines, bench_document, result_of

        result = result_of(outcome)
        return bench_document(result, axes_lines(args.bench, result.rows), args.quick)

    def failed(self, outcome: Outcome[BenchTable]) -> bool:
        """A run failed, or a repetition of one."""
        return any(r.failed or r.failed_repetitions for r in outcome.results.rows)


STUDY: Study[BenchStudyArgs, BenchTable, BenchCell] = Bench()
