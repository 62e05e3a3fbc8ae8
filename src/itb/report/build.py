"""`itb report RUN_DIR`: tables, metrics and figures again, from the raw logs alone."""

from __future__ import annotations

from pathlib import Path

from itb.analysis.fairshare import tcp_payload_share
from itb.analysis.run_results import RunMetrics
from itb.analysis.steps import profiles_kept
from itb.analysis.summary import scenario_metrics
from itb.engine import collect, rundir
from itb.engine.runrecords import RepEvents, ResolvedScenario, RunMeta, read_record
from itb.report import figures
from itb.report.html import figure, render
from itb.scenario.events import Transfer

NEEDED = ("meta.json", "scenario.resolved.json")


def read_run(run: Path) -> tuple[RunMeta, ResolvedScenario]:
    """The run's description and resolved scenario, and every committed repetition
    checked: its files against its commit marker, its events against the scenario's
    models. `RunDirError` (exit 2) naming the file (and the field, the differences)."""
    for name in NEEDED:
        if not (run / name).exists():
            raise rundir.RunDirError(f"{run / name}: missing; {run} is not a whole run "
                                     f"directory (`itb report` needs {' and '.join(NEEDED)})")
    # meta.json first: its format says how to read the rest
    meta = read_record(run / "meta.json", RunMeta)
    sc = read_record(run / "scenario.resolved.json", ResolvedScenario)
    bad = rundir.damaged(run, meta)
    if bad:
        raise rundir.RunDirError(
            f"{run}: {len(bad)} committed repetition(s) changed since they were written "
            "(or cannot be read):\n  "
            + "\n  ".join(bad) + "\n`itb run SCENARIO --out RUN --resume` redoes exactly these")
    for rd in sorted(run.glob("rep-[0-9][0-9][0-9]")):
        if (rd / "result.json").exists() and (rd / "events.json").exists():
            read_record(rd / "events.json", RepEvents)
    return meta, sc


def build_report(run: Path) -> Path:
    """Tables, metrics.json and the report from the raw logs alone: whatever metrics.json
    held before (another format included) is rebuilt, never read."""
    meta, sc = read_run(run)
    topo = sc.topology
    interval_s = sc.experiment.interval_us / 1e6
    tables = collect.build_tables(run, topo, interval_s)
    collect.write_tables(run, tables)
    dispatch = meta.dispatch.model_dump(mode="json") if meta.dispatch is not None else None
    metrics = scenario_metrics(tables, topo, dispatch)
    emulated = [lk.name for lk in topo.links if lk.emulated]
    # the forward transfers' bottleneck; in a timeline of commands only, the one emulated link
    link = metrics.context.link or (emulated[0] if len(emulated) == 1 else None)
    # a full segment's payload in its frame: TCP with timestamps; UDT 1456 in 1514 at 1500
    shares = {"tcp": tcp_payload_share(topo.mtu), "udt": (topo.mtu - 44) / (topo.mtu + 14)}
    metrics.profiles = profiles_kept(run, tables["transfers"], tables["bottleneck"], link,
                                     {n.name: n.side for n in topo.nodes}, shares)
    metrics.save(run / "metrics.json")
    out = run / "report"
    profiles = {e.id: e.profile for e in sc.experiment.events
                if isinstance(e, Transfer) and e.profile}
    figs = []
    if len(tables["transfers"]):
        for r in sorted(tables["transfers"]["repetition"].unique()):
            figs.append(figures.goodput_over_time(tables, int(r), out / f"goodput-rep{r:03d}.png",
                                                  profiles))
            figs.append(figures.bottleneck_over_time(tables, int(r), metrics.context.link,
                                                     out / f"bottleneck-rep{r:03d}.png"))
        figs.append(figures.completion_times(tables, out / "completion-times.png"))
    return write_html(out / "report.html", meta, metrics, [f for f in figs if f])


def analyse_run(run: Path) -> RunMetrics:
    """What a run ends with (`RunOptions.analyse`): tables, metrics.json and the report;
    returns the metrics as written."""
    build_report(run)
    return RunMetrics.load(run / "metrics.json")


def write_html(path: Path, meta: RunMeta | dict, metrics: RunMetrics, figs: list[Path]) -> Path:
    """One self-contained file: the figures are embedded (and kept as PNG and SVG)."""
    captions = {"goodput": "goodput per transfer and aggregate G(t); dashed: a transfer's rate profile",
                "bottleneck": "bottleneck throughput X(t) and queue",
                "completion": "completion times of the forward transfers"}
    embedded = [figure(f, next((v for k, v in captions.items() if f.name.startswith(k)), f.stem)
                       + f" ({f.stem})") for f in figs]
    return render("run.html.j2", path, meta=meta, metrics=metrics, figs=embedded,
                  overall_json=metrics.overall.model_dump_json(indent=1))
