"""`itb run` and `itb report`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

from itb.cli.backend import BACKEND, takes_backend
from itb.cli.common import (
    ACCESS,
    BUFFER,
    LOSS,
    MTU,
    PAIRS,
    RATE,
    RTT,
    app,
    out,
    overrides,
    progress,
    say,
    ticker,
)
from itb.cli.output import JSON, print_json

if TYPE_CHECKING:
    from itb.analysis.run_results import RunMetrics
    from itb.backends.registry import Backend


@app.command("run")
@takes_backend
def run_cmd(
    file: Path = typer.Argument(
        ...,
        help="Scenario TOML: a testbed plus [experiment] "
        "and a timeline of events. See docs/scenario.md.",
    ),
    repeat: int | None = typer.Option(
        None, "--repeat", min=1, help="Repetitions (default: the scenario's)."
    ),
    out_dir: Path | None = typer.Option(
        None, "--out", help="Run directory (default: runs/<name>-<date>)."
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="Seed of every random draw (default: the scenario's)."
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Continue the run in --out: repetitions that ended are not redone."
    ),
    pairs: int | None = PAIRS,
    rate: str | None = RATE,
    access_rate: str | None = ACCESS,
    rtt: str | None = RTT,
    loss: str | None = LOSS,
    buffer: str | None = BUFFER,
    mtu: int | None = MTU,
    as_json: bool = JSON,
    backend: Backend = BACKEND,
) -> None:
    """Run a scenario's timeline on the local testbed (or, with --inventory, on SSH
    hosts; with --backend sim, in ns-3), N times, into a run directory.

    Stages (each shown and timed in meta.json): preflight, reservation (namespaces),
    deployment (socket buffers vs BDP), configuration (emulator, one worker per node),
    calibration (idle RTT per pair), execution × N, gathering, analysis (Parquet tables,
    metrics.json), archiving, cleaning. A repetition whose process fails is recorded with
    the reason and the testbed is rebuilt for the next. Ctrl-C, SIGTERM and SIGHUP stop
    cleanly and keep partial results (meta.json status "incomplete"); --resume finishes
    them, redoing any repetition whose files no longer match its commit marker. Exit
    codes (docs/experiment.md): 0 every repetition ok, 1 some failed, 2 bad input,
    3 environment (testbed in use, disk full, ...), 4 missing prerequisite, 70 internal
    error, 128 + signal when stopped (130 Ctrl-C, 143 SIGTERM).
    """
    from itb.scenario.scenario import load_scenario

    if resume and out_dir is None:
        raise typer.BadParameter("--resume needs --out RUN_DIR", param_hint="--resume")
    # the inputs first: a bad one is refused before the engine is even imported
    sc = load_scenario(file, overrides(pairs, rate, access_rate, rtt, loss, buffer, mtu))
    from itb import rundir
    from itb.engine.runner import RunOptions, run

    target = out_dir or rundir.default_run_dir(Path("runs"), sc.experiment.name)
    say(f"run directory: {target}")
    tick = ticker()
    from itb.report.build import analyse_run

    result = run(
        sc,
        RunOptions(
            target,
            repeat,
            seed,
            resume,
            analyse=analyse_run,
            backend=backend,
        ),
        progress,
        tick,
    )
    tick("")
    if as_json:
        print_json(run_document(result))
    else:
        _print_run(result)
    if result.signal is not None:
        raise typer.Exit(128 + result.signal)  # 130 SIGINT, 143 SIGTERM, 129 SIGHUP
    if result.status != "complete" or any(r.get("status") != "ok" for r in result.repetitions):
        raise typer.Exit(1)


@app.command("report")
def report_cmd(
    run_dir: Path = typer.Argument(
        ...,
        help="A run directory written by `itb run`, or a benchmark's or a study's "
        "directory (`itb bench`, `itb study …`).",
    ),
    as_json: bool = JSON,
) -> None:
    """Recompute the tables, metrics and figures of an archived run from its raw logs.

    Given a benchmark's or a study's directory: every cell's run is analysed again from
    its raw logs, then the benchmark's table (table.csv, table.json) or the study's
    results (results.json) and the report are rebuilt, and printed as the command that
    made it prints them (the benchmark's verdicts and table)."""
    from itb.cli.report_dir import rerender_bench, rerender_study, sweep_kind
    from itb.report.build import build_report

    kind = sweep_kind(run_dir) if run_dir.is_dir() else None
    tick = ticker()
    if kind == "bench":
        from itb.cli.studies import show
        from itb.study.bench.summary import bench_document, shown

        result = rerender_bench(run_dir, tick)
        if as_json:
            print_json(bench_document(result, [], False))
        else:
            for s in shown(result):
                show(s)
        return
    if kind is not None:
        results, report = rerender_study(run_dir, kind, tick)
        if as_json:
            print_json({"out": run_dir, "results_file": results, "report": report})
        else:
            out.print(f"results: {results}")
            out.print(f"report: {report}")
        return
    path = build_report(run_dir)
    if as_json:
        print_json({"run_dir": run_dir, "report": path})
    else:
        out.print(f"report written to {path}")


def run_document(result) -> dict:
    """`itb run --json`: the run directory, its status, each repetition's outcome (as
    result.json records it) and the run's metrics (metrics.json; null when the analysis
    failed or did not run)."""
    return {
        "run_dir": result.run_dir,
        "status": result.status,
        "signal": result.signal,
        "repetitions": result.repetitions,
        "metrics": result.metrics,
    }


def _print_run(result) -> None:
    t = Table(title=f"repetitions ({result.status})")
    for col in ("repetition", "status", "reason"):
        t.add_column(col)
    for i, r in enumerate(result.repetitions, 1):
        style = "green" if r.get("status") == "ok" else "red"
        t.add_row(str(i), f"[{style}]{r.get('status')}[/{style}]", r.get("reason") or "")
    out.print(t)
    for i, r in enumerate(result.repetitions, 1):
        _print_truncated(i, r.get("truncated") or [])
    m = result.metrics  # RunMetrics, None when the analysis failed or did not run
    if m is not None:
        _print_metrics(m)
    out.print(f"results in {result.run_dir}")


def _binary_size(n: int) -> str:
    """1048576 → "1 MiB", 1500 → "1500 B": an output limit as the user likely wrote it."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n} B"


def _print_truncated(repetition: int, cut: list[dict]) -> None:
    """One line per process whose output was cut (result.json's `truncated`)."""
    by_process: dict[str, list[dict]] = {}
    for t in cut:
        by_process.setdefault(t["process"], []).append(t)
    for proc, streams in by_process.items():
        dropped = ", ".join(
            f"{t['stream']} {t['dropped_bytes']} bytes"
            if t.get("dropped_bytes") is not None
            else t["stream"]
            for t in streams
        )
        first, limit = streams[0], streams[0].get("limit_bytes")
        why = (
            f"could not be written ({escape(first['reason'])})"
            if first.get("reason")
            else "was truncated at its output limit"
            + (f" of {_binary_size(limit)}" if limit else "")
        )
        out.print(
            f"[yellow]repetition {repetition}: the output of {proc} on {first['node']} "
            f"{why}; dropped: {dropped}[/yellow]",
            soft_wrap=True,
        )


def _print_metrics(m: RunMetrics) -> None:
    ct, bad = m.overall.completion, m.overall.n_corrupt
    if ct.n:
        out.print(
            f"forward transfers: {ct.n} completed; completion time mean "
            f"{ct.t_mean:.2f} s (min {ct.t_min:.2f}, max {ct.t_max:.2f}, "
            f"CoV {'–' if ct.cov is None else format(ct.cov, '.3f')})"
        )
    if ct.n_failed:
        out.print(
            f"[red]forward transfers not completed: {ct.n_failed}"
            + (
                f", {bad} of them with a corrupt window (impossible cwnd or ssthresh in "
                "the sender's tcp_info; see transfers.parquet, corrupt_window)"
                if bad
                else ""
            )
            + "[/red]"
        )
    fair = m.overall.fair_share
    if fair is not None and fair.difference_pct is not None:
        out.print(
            f"fair-share ideal: mean {fair.compared_ideal_mean_s:.2f} s; measured "
            f"{fair.measured_mean_s:.2f} s ({fair.difference_pct:+.1f} %)"
            + (f"; the model ignores the {', '.join(fair.ignores)} traffic" if fair.ignores else "")
        )
    late = m.overall.lateness
    if late is not None and late.n:
        out.print(
            f"transfers with a rate profile: {late.n} completed, lateness (completion − "
            f"the profile's) mean {late.mean_s:+.3f} s, min {late.min_s:+.3f}, max {late.max_s:+.3f}"
            + (f"; {late.n_failed} not completed" if late.n_failed else "")
        )
    for k in m.profiles:
        if k.shared_with:
            out.print(
                f"profile of {k.kind} {k.event}, repetition {k.repetition}: shared "
                f"{k.link} ({k.direction}) with {', '.join(k.shared_with[:5])}: no "
                "per-step figure (the link's rate is not its own)"
            )
            continue
        ratios = ", ".join("–" if s.ratio is None else f"{s.ratio:.4f}" for s in k.steps)
        out.print(
            f"profile of {k.kind} {k.event}, repetition {k.repetition}: each step's wire "
            f"rate at {k.link} ({k.direction}) over the profile's, from 1 s after its "
            f"date: {ratios}"
        )
    dl = m.overall.deadlines
    if dl is not None:
        out.print(
            f"transfers with a deadline: {dl.met} of {dl.n} made it"
            + (f", [red]{dl.missed} missed[/red]" if dl.missed else "")
        )
    disp = m.dispatch
    if disp is not None and disp.events:
        out.print(
            f"dispatch error over {disp.events} events: p50 {disp.p50_ms:.3f} ms, "
            f"p99 {disp.p99_ms:.3f} ms, max {disp.max_ms:.3f} ms"
        )
