"""A run directory's analysis from its raw logs alone: the records read and checked,
the tables built (itb.analysis.logs) and written, the metrics computed and written
(metrics.json). Whatever metrics.json held before (another format included) is rebuilt,
never read; the report (itb.report.build) only renders what this returns."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from itb import rundir
from itb.analysis import logs
from itb.analysis.fairshare import tcp_payload_share
from itb.analysis.run_results import RunMetrics
from itb.analysis.steps import profiles_kept
from itb.analysis.summary import scenario_metrics
from itb.errors import ItbError
from itb.rundir.records import RepEvents, ResolvedScenario, RunMeta, read_record

NEEDED = ("meta.json", "scenario.resolved.json")


class NothingToReport(ItbError):
    """No repetition of the run left a log of its transfers (each failed before its
    programs wrote: a simulator killed or stopped at its start): exit 1, the
    experiment failed; the message says what is missing and why."""


@dataclass
class RunAnalysis:
    meta: RunMeta
    scenario: ResolvedScenario
    tables: dict[str, pd.DataFrame]
    metrics: RunMetrics


def read_run(run: Path) -> tuple[RunMeta, ResolvedScenario]:
    """The run's description and resolved scenario, and every committed repetition
    checked: its files against its commit marker, its events against the scenario's
    models. `RunDirError` (exit 2) naming the file (and the field, the differences)."""
    for name in NEEDED:
        if not (run / name).exists():
            raise rundir.RunDirError(
                f"{run / name}: missing; {run} is not a whole run "
                f"directory (`itb report` needs {' and '.join(NEEDED)})"
            )
    # meta.json first: its format says how to read the rest
    meta = read_record(run / "meta.json", RunMeta)
    sc = read_record(run / "scenario.resolved.json", ResolvedScenario)
    bad = rundir.damaged(run, meta)
    if bad:
        raise rundir.RunDirError(
            f"{run}: {len(bad)} committed repetition(s) changed since they were written "
            "(or cannot be read):\n  "
            + "\n  ".join(bad)
            + "\n`itb run SCENARIO --out RUN --resume` redoes exactly these"
        )
    for rd in sorted(run.glob("rep-[0-9][0-9][0-9]")):
        if (rd / "result.json").exists() and (rd / "events.json").exists():
            read_record(rd / "events.json", RepEvents)
    return meta, sc


def analyse_run_dir(run: Path) -> RunAnalysis:
    """Tables and metrics.json from the raw logs of `run`."""
    meta, sc = read_run(run)
    topo = sc.topology
    tables = logs.build_tables(run, topo, sc.experiment.interval_us / 1e6)
    if len(tables["transfers"]) and tables["samples"].empty:
        raise NothingToReport(_missing(run, tables["transfers"]))
    logs.write_tables(run, tables)
    dispatch = meta.dispatch.model_dump(mode="json") if meta.dispatch is not None else None
    metrics = scenario_metrics(tables, topo, dispatch)
    emulated = [lk.name for lk in topo.links if lk.emulated]
    # the forward transfers' bottleneck; in a timeline of commands only, the one emulated link
    link = metrics.context.link or (emulated[0] if len(emulated) == 1 else None)
    # a full segment's payload in its frame: TCP with timestamps; UDT 1456 in 1514 at 1500
    shares = {"tcp": tcp_payload_share(topo.mtu), "udt": (topo.mtu - 44) / (topo.mtu + 14)}
    metrics.profiles = profiles_kept(
        run,
        tables["transfers"],
        tables["bottleneck"],
        link,
        {n.name: n.side for n in topo.nodes},
        shares,
    )
    metrics.save(run / "metrics.json")
    return RunAnalysis(meta, sc, tables, metrics)


def _missing(run: Path, transfers: pd.DataFrame) -> str:
    """What a run without a single sample lacks: each repetition's transfers' logs (empty
    or missing) and the reason the repetition gave."""
    lines = []
    for r, rows in transfers.groupby("repetition"):
        rd = rundir.rep_dir(run, int(r))
        logs_of = []
        for t in rows.itertuples():
            recv, send = ("udp-recv", "udp-send") if t.kind == "udp" else ("recv", "send")
            for node, name in (
                (t.dst, f"{t.transfer}.{recv}.csv"),
                (t.src, f"{t.transfer}.{send}.csv"),
            ):
                path = rd / "nodes" / node / name
                size = f"{path.stat().st_size} bytes" if path.exists() else "missing"
                logs_of.append(f"{path.relative_to(run)} ({size})")
        reason = next((e for e in rows["error"] if isinstance(e, str) and e), "no reason given")
        shown = ", ".join(logs_of[:4]) + (
            f" and {len(logs_of) - 4} more" if len(logs_of) > 4 else ""
        )
        lines.append(f"repetition {int(r)}: {reason}; its logs: {shown}")
    return (
        f"{run}: nothing to report: no repetition wrote a sample of its transfers (every "
        "log is empty or missing):\n  " + "\n  ".join(lines)
    )
