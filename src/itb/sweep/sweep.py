"""A sweep: many generated scenarios ("cells"), each repeated, each an engine run.

    SWEEP/
      <kind>.json                the arguments, every cell and the run order (its models
                                 and its reader: itb.sweep.index)
      calibration.json           the testbed's last calibration, when there is one
      scenarios/<cell>.toml      each cell's generated scenario (`itb run` takes it)
      cells/<cell>/              each cell's run directory (docs/run-directory.md)

Order: repetition r of every cell runs before repetition r + 1 of any, the cells of a
round shuffled with the seed, so slow drifts of the machine spread over all cells.
Interrupted, the same command (same arguments, same directory) resumes: repetitions
that ended are not run again. `itb bench` and `itb study` are sweeps.

A sequential sweep (`itb bench` without --repeat: itb.analysis.sequential) runs to each
look of its design in turn, only the cells its `still_open` says are undecided, and stops
when none is, at the last look, or when its budget (seconds of this invocation) ends.
What is open after a look is computed from the repetitions alone, so a resumed sweep
takes the same sequence.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Generic, Protocol, TypeVar

import numpy as np
import tomli_w

from itb import rundir
from itb.analysis.results import OtherFormat
from itb.analysis.run_results import RunMetrics
from itb.analysis.sequential import Design
from itb.backends import owner
from itb.backends.registry import Backend, Side, named
from itb.calibration.record import DEFAULT_CALIBRATION
from itb.engine import runner
from itb.errors import ItbError, OutputError, ScenarioError
from itb.say import Say
from itb.scenario.scenario import load_scenario, scenario_from_data
from itb.sweep.index import FORMAT, C, IndexCell, Status, SweepIndex, read_index


class AnalyseRun(Protocol):
    """What a run ends with (`RunOptions.analyse`): its tables, metrics.json and report
    (figures=False: without the report), given by the caller (the CLI passes
    itb.report.build.analyse_run): the sweep does not draw."""

    def __call__(self, run: Path, figures: bool = True) -> RunMetrics: ...


R = TypeVar("R")


@dataclass
class SweepCell(Generic[C]):
    """A cell as its plan makes it: what the index keeps of it (its name and labels: its
    study's `IndexCell`) and its scenario."""

    info: C
    doc: dict  # the scenario file's tables

    @property
    def name(self) -> str:
        return self.info.name


def digest(key: dict) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]


def default_dir(kind: str, key: dict, root: Path = Path("runs")) -> Path:
    """Where a sweep goes when no --out is given: the same arguments, the same directory,
    so running the same command again resumes it."""
    return root / f"{kind}-{digest(key)}"


def order(names: list[str], repeat: int, seed: int) -> list[tuple[str, int]]:
    out = []
    for r in range(1, repeat + 1):
        perm = np.random.default_rng([seed, r]).permutation(len(names))
        out += [(names[i], r) for i in perm]
    return out


class Sweep(Generic[C]):
    """A sweep of cells `C` (its study's `IndexCell`); its index's model is
    `SweepIndex[C]`, given as `index_model` (a study whose cells are of several kinds
    gives `SweepIndex[Annotated[A | B, Field(discriminator=...)]]`)."""

    def __init__(
        self,
        out: Path,
        kind: str,
        index_model: type[SweepIndex[C]],
        key: dict,
        cells: list[SweepCell[C]],
        repeat: int,
        seed: int,
    ):
        self.out, self.kind, self.key, self.cells = out, kind, key, cells
        self.index_model = index_model
        self.repeat, self.seed = repeat, seed
        self.index_path = out / f"{kind}.json"
        self._index: SweepIndex[C] | None = None
        self.signal: int | None = None  # set when a run was stopped by a signal
        self.backend: Backend = named()  # where every run runs (itb.backends.registry)
        # but these cells' runs on another backend (a cross-validation's simulated ones)
        self.cell_backends: dict[str, Backend] = {}
        self.analyse_run: AnalyseRun | None = None  # each run's analysis (set by `drive`)
        # a sequential sweep: its looks, and after each the cells still to repeat
        self.design: Design | None = None
        self.still_open: Callable[[Sweep[C]], set[str]] | None = None
        self.budget_s: float | None = None  # this invocation's running time, at most

    @property
    def index(self) -> SweepIndex[C]:
        """The index, once `open` made or read it."""
        if self._index is None:
            raise RuntimeError(f"the {self.kind} sweep {self.out} is not open")  # a bug of ITB
        return self._index

    @index.setter
    def index(self, index: SweepIndex[C]) -> None:
        self._index = index

    def scenario(self, name: str) -> Path:
        return self.out / "scenarios" / f"{name}.toml"

    def run_dir(self, name: str) -> Path:
        return self.out / "cells" / name

    def open(self) -> SweepIndex[C]:
        """Resume the directory made with the same arguments, or create it; every
        scenario is written and validated before anything runs. An index that is not one
        of this sweep's (damaged, of another format, other cells) is a `RunDirError`
        naming the file and the field; one of other arguments a `ScenarioError`."""
        d = digest(self.key)
        if self.index_path.exists():
            self.index = read_index(self.index_path, self.index_model, d)
            return self.index
        if self.out.exists() and any(self.out.iterdir()):
            raise rundir.RunDirError(
                f"{self.out} exists, is not empty and is not a {self.kind} directory"
            )
        for c in self.cells:  # every scenario valid before anything is written
            sc = scenario_from_data(
                copy.deepcopy(c.doc), f"{self.kind} cell {c.name} (made from the options)"
            )
            why = self.backend_of(c.name).unsupported(sc)
            if why:
                raise ScenarioError(None, "--backend", f"{self.kind} cell {c.name} {why}")
        (self.out / "scenarios").mkdir(parents=True, exist_ok=True)
        for c in self.cells:
            header = (
                f"# {c.name}: generated by `itb {self.kind}`; run it alone with "
                f"`itb run {self.scenario(c.name)}`\n"
            )
            self.scenario(c.name).write_text(header + tomli_w.dumps(c.doc))
            load_scenario(self.scenario(c.name))  # what runs is what was validated
        if DEFAULT_CALIBRATION.exists():  # the testbed's calibration goes with its results
            shutil.copyfile(DEFAULT_CALIBRATION, self.out / "calibration.json")
        self.index = self.index_model(
            format=FORMAT,
            kind=self.kind,
            digest=d,
            args=self.key,
            created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            cells=[c.info for c in self.cells],
            order=order([c.name for c in self.cells], self.repeat, self.seed),
            status="running",
        )
        self.index.write(self.index_path)
        return self.index

    def run(self, say: Say, tick: Say) -> Status:
        """Every (cell, repetition) not yet ended, look by look for a sequential sweep;
        "complete" (also when a sequence stopped early: decided, or its budget ended) or
        "incomplete" (interrupted)."""
        units = self.index.order
        # checked once (each check reads a repetition's files); grown as runs end
        done = {(n, r) for n, r in units if r in rundir.repetitions_done(self.run_dir(n), r)}
        if done:
            say(f"resuming {self.out}: {len(done)} of {len(units)} runs already done")
        t0 = time.monotonic()
        looks = self.design.looks if self.design else (self.repeat,)
        open_ = {c.name for c in self.cells}
        status: Status = "complete"
        if self.index.stopped_by:  # a budget's end before: this invocation has its own
            self.index.stopped_by = None
        for j, look in enumerate(looks):
            todo = [(n, r) for n, r in units if r <= look and n in open_ and (n, r) not in done]
            if self.design and todo:
                say(f"look {j + 1} of {len(looks)}: {len(open_)} cell(s) to {look} repetitions")
            status = self._run_units(todo, say, tick, t0, done)
            if status != "complete" or self.index.stopped_by or j == len(looks) - 1:
                break
            if self.still_open is not None:
                self.measure(say)
                open_ = self.still_open(self)
            if not open_:
                say(f"every comparison decided after {look} repetitions")
                break
        self.index.status = status
        self.index.write(self.index_path)
        self.draw_reports(say)  # (with the metrics of what ran since the last look)
        return status

    def measure(self, say: Say) -> None:
        """At a look: each cell's metrics.json from its raw logs, where a repetition ended
        after it was written (not after every run: it reads every repetition of the cell).
        One that fails is a warning: the raw results stay."""
        stale = [
            c.name
            for c in self.cells
            if _newer(_last_commit(self.run_dir(c.name)), self.run_dir(c.name) / "metrics.json")
        ]
        self._analyse(stale, False, say)

    def draw_reports(self, say: Say) -> None:
        """When the sweep stops: each cell's metrics and report in one analysis (not after
        every run: a cell's figures grow with its repetitions), where a repetition ended
        after its report was drawn or its metrics.json is newer than it. One that cannot
        be drawn is a warning; the results are the metrics'."""
        stale = []
        for c in self.cells:
            run = self.run_dir(c.name)
            html = run / "report" / "report.html"
            if _newer(_last_commit(run), html) or _newer(run / "metrics.json", html):
                stale.append(c.name)
        if stale:
            say(f"drawing the reports of {len(stale)} cell(s)")
        self._analyse(stale, True, say)

    def _analyse(self, names: list[str], figures: bool, say: Say) -> None:
        if self.analyse_run is None:
            return
        for name in names:
            try:
                self.analyse_run(self.run_dir(name), figures=figures)
            except Exception as e:  # noqa: BLE001 — as the runner's analysis stage
                if isinstance(e, OutputError) and not figures:
                    raise  # the directory cannot be written: stop, as a run does
                say(
                    f"warning: the report of {name} could not be drawn: {e}"
                    if figures
                    else f"warning: the analysis of {name} failed: {e!r}"
                )

    def _run_units(
        self, todo: list[tuple[str, int]], say: Say, tick: Say, t0: float, done: set
    ) -> Status:
        """Run these (cell, repetition)s in order, adding each that ends to `done`:
        "incomplete" when interrupted; a budget that ends before one of them starts marks
        the index `stopped_by` "budget"."""
        side_by_side: dict[str, list[int]] = {}
        side = self._side_by_side()
        if side is not None:  # (simulated) cells in parallel, after the others
            for n, r in todo:
                if self.backend_of(n).side_by_side() is not None:
                    side_by_side.setdefault(n, []).append(r)
            todo = [(n, r) for n, r in todo if n not in side_by_side]
        t1 = time.monotonic()
        for i, (name, r) in enumerate(todo, 1):
            if self.budget_s is not None and time.monotonic() - t0 >= self.budget_s:
                say(f"the budget of {self.budget_s / 60:g} min has ended")
                self.index.stopped_by = "budget"
                return "complete"
            eta = ""
            if i > 1:
                left = (time.monotonic() - t1) / (i - 1) * (len(todo) - i + 1)
                eta = f", about {left / 60:.0f} min left"
            say(f"[{i}/{len(todo)}] {name} repetition {r}/{self.repeat}{eta}")
            run_dir = self.run_dir(name)
            opts = runner.RunOptions(
                out=run_dir,
                repetitions=r,
                resume=(run_dir / "meta.json").exists(),
                analyse=None,  # measured at the looks and at the end (measure)
                backend=self.backend_of(name),
            )
            try:
                res = runner.run(
                    load_scenario(self.scenario(name)), opts, say=lambda m: None, tick=tick
                )
            except KeyboardInterrupt:
                return "incomplete"
            self.signal = res.signal
            if res.signal is not None or r not in rundir.repetitions_done(run_dir, r):
                return "incomplete"  # interrupted: the runner tore everything down
            done.add((name, r))
            rep = res.repetitions[r - 1]
            say(
                f"      {rep.get('status')}"
                + (f": {rep.get('reason')}" if rep.get("reason") else "")
                + _took(rep)
            )
        if side is not None and side_by_side:
            from itb.sweep import parallel

            cells = {n: sorted(rs) for n, rs in side_by_side.items()}
            backend = self.backend_of(next(iter(cells)))
            ended = parallel.run_cells(
                cells, self.scenario, self.run_dir, self._measure(), say,
                side.jobs, side.dask, backend,
            )  # fmt: skip
            if ended:
                done.update((n, r) for n, rs in side_by_side.items() for r in rs)
            return "complete" if ended else "incomplete"
        return "complete"

    def backend_of(self, cell: str) -> Backend:
        """The backend the cell's runs run on."""
        return self.cell_backends.get(cell, self.backend)

    def _side_by_side(self) -> Side | None:
        """How the cells whose backend runs them side by side do (one such backend a
        sweep), None when they run one at a time (a single core: in order as the others)."""
        sides = {b.side_by_side() for b in [self.backend, *self.cell_backends.values()]} - {None}
        if len(sides) > 1:  # (a bug of a study: every cell side by side the same way)
            raise ScenarioError(None, "--backend", "cells run side by side in two ways")
        side = next(iter(sides), None)
        return side if side is not None and (side.jobs > 1 or side.dask) else None

    def _measure(self) -> Callable[[Path], RunMetrics] | None:
        """Each run's analysis during the sweep: metrics without figures (draw_reports)."""
        return None if self.analyse_run is None else partial(self.analyse_run, figures=False)

    def metrics(self, cell: IndexCell) -> RunMetrics | None:
        """A cell's metrics.json, None before its run made one. One of another format
        (written by an older ITB) is rebuilt from the cell's raw logs, as `itb report`
        does, so that a sweep begun by an older ITB can be resumed and analysed."""
        run = self.out / cell.run
        if not (run / "metrics.json").exists():
            return None
        try:
            return RunMetrics.load(run / "metrics.json")
        except OtherFormat as stale:
            if self.analyse_run is None:
                raise
            try:
                return self.analyse_run(run)
            except ItbError as e:
                raise ItbError(f"{stale}; rebuilding it failed: {e}") from e


@dataclass
class Outcome(Generic[R]):
    """What a benchmark or a study gives back: its directory, whether every run ended,
    its typed results and its report."""

    out: Path
    status: str  # "complete" or "incomplete"
    results: R
    report: Path
    signal: int | None = None  # the signal that stopped it (SIGINT, SIGTERM, SIGHUP)

    def exit_code(self) -> int:
        """0 complete, 128 + the signal when stopped by one, 1 when runs did not end."""
        if self.signal is not None:
            return 128 + self.signal
        return 0 if self.status == "complete" else 1


def drive(
    sweep: Sweep[C],
    analyse: Callable[[Sweep[C]], R],
    report: Callable[[Sweep[C], R], Path],
    say: Say,
    tick: Say,
    analyse_run: AnalyseRun,
) -> Outcome[R]:
    """The one life of every sweep (`itb bench`, `itb study ...`): open it (or resume the
    directory made with the same arguments), run what has not ended (each run analysed by
    `analyse_run`), analyse what has (also when interrupted), and build the report from
    the analysis. The report and the runs' analysis are the caller's (the CLI's)."""
    sweep.analyse_run = analyse_run
    # across all its runs, not only during each; a simulated sweep uses nothing of the
    # machine's network and takes no lock
    exclusive = sweep.backend.exclusive or any(b.exclusive for b in sweep.cell_backends.values())
    lock = owner.exclusive(f"itb {sweep.kind}") if exclusive else contextlib.nullcontext()
    with lock:
        sweep.open()
        status = sweep.run(say, tick)
        results = analyse(sweep)
        return Outcome(sweep.out, status, results, report(sweep, results), sweep.signal)


def _newer(source: Path | None, made: Path) -> bool:
    """`made` (made from `source`) is missing or older than source; False without source."""
    if source is None or not source.exists():
        return False
    return not made.exists() or made.stat().st_mtime_ns < source.stat().st_mtime_ns


def _last_commit(run: Path) -> Path | None:
    """The commit marker of the repetition that ended last (None before any)."""
    markers = list(run.glob("rep-*/result.json"))
    return max(markers, key=lambda p: p.stat().st_mtime_ns) if markers else None


def _took(rep: dict) -> str:
    """How long the repetition ran (its timeline; its metrics come at the next look)."""
    zero, end = rep.get("zero_ns"), rep.get("end_ns")
    return f", {(end - zero) / 1e9:.1f} s" if zero and end else ""
