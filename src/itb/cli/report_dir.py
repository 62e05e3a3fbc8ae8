"""`itb report DIR` on a benchmark's or a study's directory: every cell's run analysed
again from its raw logs, then the table (or the study's results) and the report rebuilt,
as the command that made the directory would (docs/run-directory.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from itb.errors import ScenarioError
from itb.say import Say


def sweep_kind(d: Path) -> str | None:
    """The kind of sweep whose index is in `d` ("bench", a study's kind), or None."""
    from itb.rundir.records import load_json

    for index in sorted(d.glob("*.json")):
        if index.stem == "bench" or index.stem in _study_kinds():
            doc = load_json(index)
            if isinstance(doc, dict) and doc.get("kind") == index.stem:
                return index.stem
    return None


def _study_kinds() -> dict[str, Any]:
    from itb.study.registry import studies

    return {r.study.kind: r for r in studies()}


def _reanalyse(out: Path, runs: list[str], tick: Say) -> None:
    """Every cell's tables, metrics and report from its raw logs (`itb report RUN`)."""
    from itb.report.build import analyse_run

    ran = [r for r in runs if (out / r / "meta.json").exists()]
    for i, run in enumerate(ran, 1):
        tick(f"analysing cell {i}/{len(ran)}: {run}")
        analyse_run(out / run)
    tick("")


def rerender_bench(out: Path, tick: Say):
    """The benchmark in `out`: its cells analysed again, table.csv / table.json and the
    report rebuilt (what `itb bench` wrote, from the same repetitions). Returns the
    BenchResult `itb bench` prints."""
    from itb.report.build import analyse_run
    from itb.study.bench.report import build_bench_report
    from itb.study.bench.summary import result_from
    from itb.suite.benchmark import summarise
    from itb.suite.realisation import BenchCell
    from itb.sweep.index import SweepIndex, read_index
    from itb.sweep.sweep import Sweep

    index = read_index(out / "bench.json", SweepIndex[BenchCell])
    _reanalyse(out, [c.run for c in index.cells], tick)
    sweep: Sweep[BenchCell] = Sweep(
        out, "bench", SweepIndex[BenchCell], index.args, [], int(index.args.get("repeat", 1)), 0
    )
    sweep.index, sweep.analyse_run = index, analyse_run
    table = summarise(sweep)
    report = build_bench_report(out, index, table.rows, table.comparisons)
    return result_from(index, out, index.status, table, report)


def rerender_study(out: Path, kind: str, tick: Say) -> tuple[Path, Path]:
    """A study's directory: its cells analysed again, results.json and the report rebuilt
    from its arguments as its index records them. Returns (results.json, report)."""
    from itb.backends import registry
    from itb.cli.studies import on_backend, report_of
    from itb.report.build import analyse_run
    from itb.rundir.records import load_json

    entry = _study_kinds()[kind]
    study = entry.study
    path = out / f"{kind}.json"
    # the backend its runs ran on, as the key records it (its runs are not run again)
    backend, key = registry.from_key(dict(load_json(path).get("args") or {}))
    # the key is the arguments' dump, derived values included (e.g. capacity_bps): the
    # fields alone make the arguments again, and the index's digest checks the rest
    fields = {k: v for k, v in key.items() if k in study.Args.model_fields}
    for name, value in key.items():  # a value derived from an option left out of the key
        given = name.removesuffix("_bps")  # (capacity_bps: --capacity, as it was resolved)
        if given != name and given in study.Args.model_fields and given not in key:
            fields[given] = value
    try:
        args = study.Args.model_validate(fields | {"backend": backend})
    except ValueError as e:
        raise ScenarioError(str(path), "args", f"not the arguments of {kind}: {e}") from None
    sweep = on_backend(study.plan(args, out, lambda m: None), backend, " ".join(study.name))
    sweep.analyse_run = analyse_run
    sweep.open()  # the index there, checked to be of these arguments
    _reanalyse(out, [c.run for c in sweep.index.cells], tick)
    results = study.analyse(sweep, args)
    report = report_of(entry)(out, sweep.index, args, results)
    return out / "results.json", report
