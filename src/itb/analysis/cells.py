"""Readers of a sweep's cells (benchmark, studies) that the report and the drivers share."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import pandas as pd

from itb import rundir
from itb.analysis.run_results import RunMetrics
from itb.rundir.records import ResolvedScenario, read_record


class Cell(Protocol):
    """A cell of a sweep's index as these readers need it: its run directory, relative to
    the sweep's (`itb.sweep.index.IndexCell`, and every study's cell, is one)."""

    @property
    def run(self) -> str: ...


def bottleneck_link(out: Path, cell: Cell) -> str | None:
    """The link a cell's forward transfers cross as their bottleneck, from the run itself:
    its metrics' context (analysis computed it from the topology), else the one emulated
    link of its resolved topology; None when neither says."""
    run = out / cell.run
    if (run / "metrics.json").exists():
        link = RunMetrics.load(run / "metrics.json").context.link
        if link:
            return link
    if (run / "scenario.resolved.json").exists():
        topo = read_record(run / "scenario.resolved.json", ResolvedScenario).topology
        emulated = [lk.name for lk in topo.links if lk.emulated]
        if len(emulated) == 1:
            return emulated[0]
    return None


def cell_table(out: Path, cell: Cell, name: str) -> pd.DataFrame | None:
    """One of a cell's tables (`transfers`, `bottleneck`, `samples`; all repetitions),
    None before its run made it or while it holds no row (every repetition so far was
    interrupted, and those stay out of the tables: a table of no rows, not always with
    every column)."""
    path = out / cell.run / f"{name}.parquet"
    if not path.exists():
        return None
    df = rundir.read_table(path)
    return None if df.empty else df


def cell_transfers(out: Path, cell: Cell) -> pd.DataFrame | None:
    """A cell's transfers table (all repetitions), None before its run made one."""
    return cell_table(out, cell, "transfers")


def forward_completions(out: Path, cell: Cell) -> list[float]:
    """Completion times (s) of a cell's completed forward transfers, all repetitions."""
    tr = cell_transfers(out, cell)
    if tr is None:
        return []
    tr = tr[(tr["direction"] == "forward") & tr["ok"]]
    return [float(x) for x in tr["completion_s"].dropna()]
