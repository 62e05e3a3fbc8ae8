"""The benchmark `itb bench` runs (itb.study.bench): its arguments resolved (`BenchArgs`),
its application × class × protocol cells, when a sequence looks again, and the table
and protocol comparisons made from the cells' runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from itb import rundir
from itb.analysis.benchmark import BenchComparison, BenchRow, BenchTable, reference_of
from itb.analysis.sequential import FIRST_LOOK, Design, design_of
from itb.backends.registry import Backend, named
from itb.errors import ScenarioError
from itb.suite import apps, stats
from itb.suite.apps import PA_MESSAGES
from itb.suite.axes import check_k, rtt_text, with_axes
from itb.suite.background import Background
from itb.suite.classes import DATA_CENTRE_K, ItbClass
from itb.suite.realisation import BenchCell, BenchRealisation
from itb.suite.scaling import Scale
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell

MAX_STREAMS_PER_SOURCE = 10  # RR-6244 Table 5: N_s of 1, 5 or 10


@dataclass(frozen=True)
class BenchArgs:
    apps: tuple[str, ...]
    classes: tuple[ItbClass, ...]
    ccs: tuple[str, ...]
    repeat: int
    seed: int
    spacing_s: float
    scale: Scale
    pa_messages: int = PA_MESSAGES
    backend: Backend = field(default_factory=named)  # where its runs run (--backend)
    reference: str | None = None  # the protocol the others are compared with (None: ccs[0])
    streams: int = 1  # N_s: parallel streams per BU forward source
    k: int = DATA_CENTRE_K  # the data-centre classes' K (RR-6244 Table 3: 1 or 10)
    rtt_modes_ms: tuple[float, ...] = ()  # --rtt: every class's RTT, or a mix (none: the class's)
    background: Background = field(default_factory=Background)  # B
    # repetitions until every comparison is decided, `repeat` at most (itb.analysis.
    # sequential); False: exactly `repeat` (--repeat)
    sequential: bool = False
    first_look: int = FIRST_LOOK  # a sequence's first look (--quick: 4)
    budget_s: float | None = None  # a sequence's running time, at most (not in the key)

    def __post_init__(self) -> None:
        check_k(self.k)
        # UDT is another protocol, not a congestion control: a bad argument here (what a
        # backend lacks of the kernel's is refused by its `ready`, exit 4)
        if "udt" in self.ccs and self.backend.cc_unsupported("udt"):
            raise ScenarioError(None, "--cc", f"UDT does not run on --backend {self.backend.name}")
        if self.reference is not None and self.reference not in self.ccs:
            raise ScenarioError(
                None,
                "--reference",
                f"{self.reference!r} is not one of the protocols compared ({', '.join(self.ccs)})",
            )
        if not 1 <= self.streams <= MAX_STREAMS_PER_SOURCE:
            raise ScenarioError(
                None, "--streams", f"{self.streams}: give 1 to {MAX_STREAMS_PER_SOURCE}"
            )

    @property
    def design(self) -> Design:
        if self.sequential:
            return Design.adaptive(self.repeat, self.first_look)
        return Design.fixed(self.repeat)

    @property
    def reference_cc(self) -> str:
        """The protocol every other one is compared with: --reference, or the first one."""
        return self.reference or self.ccs[0]

    def key(self) -> dict:
        """What identifies a benchmark: the same key resumes the same directory (a
        benchmark on an SSH testbed is another one than the local testbed's; one whose
        reference is not the first protocol another one than the default's, whose key,
        as before references were chosen, has none)."""
        key = {
            "apps": list(self.apps),
            "classes": [c.name for c in self.classes],
            "ccs": list(self.ccs),
            "repeat": self.repeat,
            "seed": self.seed,
            "spacing_s": self.spacing_s,
            "scale": self.scale.to_json(),
            "pa_messages": self.pa_messages,
        }
        key |= self.backend.key()  # (a run elsewhere: another benchmark)
        if self.reference_cc != self.ccs[0]:
            key["reference"] = self.reference_cc
        if self.streams != 1:  # (keys written before N_s was an option have none)
            key["streams"] = self.streams
        if self.k != DATA_CENTRE_K:  # (nor before K, the RTT and B were)
            key["k"] = self.k
        if self.rtt_modes_ms:
            key["rtt"] = rtt_text(self.rtt_modes_ms)
        if self.background.kind != "none":
            key["background"] = self.background.text
        if self.sequential:  # `repeat` is then the most a cell runs
            key["design"] = "sequential"
            if self.first_look != FIRST_LOOK:
                key["first_look"] = self.first_look
        return key

    def realised_classes(self) -> tuple[ItbClass, ...]:
        """The classes with --k and --rtt applied."""
        return tuple(with_axes(c, self.k, self.rtt_modes_ms) for c in self.classes)


def cells_of(args: BenchArgs) -> list[apps.Cell]:
    return [
        apps.Cell(a, c, cc, v)
        for a in args.apps
        for v in apps.variants(a)
        for c in args.realised_classes()
        for cc in args.ccs
    ]


def sweep_of(args: BenchArgs, out: Path) -> Sweep[BenchCell]:
    """Every cell generated (and so checked) before anything is written or run."""
    cells = []
    for cell in cells_of(args):
        g = apps.generate(
            cell,
            args.scale.of(cell.cls),
            args.seed,
            args.spacing_s,
            args.repeat,
            args.pa_messages,
            args.streams,
            args.background,
        )
        cells.append(
            SweepCell(
                BenchCell(
                    name=cell.name,
                    app=cell.app,
                    variant=cell.variant,
                    cls=cell.cls.name,
                    cc=cell.cc,
                    realisation=BenchRealisation.model_validate(g.realisation),
                ),
                g.doc,
            )
        )
    sweep = Sweep(out, "bench", SweepIndex[BenchCell], args.key(), cells, args.repeat, args.seed)
    sweep.backend = args.backend
    if args.sequential:
        sweep.design, sweep.still_open, sweep.budget_s = args.design, still_open, args.budget_s
    return sweep


def _cells(sweep: Sweep[BenchCell]) -> list[tuple[stats.CellKey, list[dict]]]:
    """Each cell's key and per-repetition rows, from the cells' metrics.json."""
    cells = []
    for c in sweep.index.cells:
        m = sweep.metrics(c)
        cells.append(
            (
                stats.CellKey(c.app, c.variant, c.cls, c.cc),
                stats.per_repetition(m, c.cc) if m is not None else [],
            )
        )
    return cells


def _comparisons(sweep: Sweep[BenchCell], cells) -> list[BenchComparison]:
    reference = reference_of(sweep.index.args)
    if not reference:
        return []
    ran = [_repetitions_ran(sweep, c) for c in sweep.index.cells]
    # while it runs (`still_open`) the sequence has not ended: a budget's end is recorded
    # in the index once it stopped it
    ended = sweep.index.stopped_by == "budget"
    return stats.compare(cells, reference, design_of(sweep.index.args), ran, ended=ended)


def _repetitions_ran(sweep: Sweep[BenchCell], cell: BenchCell) -> int:
    """Up to which repetition the cell ran (ended, ok or failed by the experiment)."""
    done = rundir.repetitions_done(sweep.out / cell.run, int(sweep.index.args.get("repeat", 1)))
    return max(done, default=0)


def still_open(sweep: Sweep[BenchCell]) -> set[str]:
    """After a look: the cells whose application × class has a comparison undecided."""
    cells = _cells(sweep)
    groups = {
        (c.app, c.variant, c.cls) for c in _comparisons(sweep, cells) if c.verdict == "inconclusive"
    }
    return {c.name for c in sweep.index.cells if (c.app, c.variant, c.cls) in groups}


def summarise(sweep: Sweep[BenchCell]) -> BenchTable:
    """The table and comparisons from the cells' metrics.json (also for a partial sweep),
    against the reference its index records, by its design (a sequence replayed from the
    repetitions in order)."""
    cells = _cells(sweep)
    rows = []
    for row, c in zip(stats.table_rows(cells), sweep.index.cells):
        meta_path = sweep.out / c.run / "meta.json"
        statuses = (
            rundir.read_json(meta_path).get("repetition_status", []) if meta_path.exists() else []
        )
        row["failed_repetitions"] = sum(s not in ("ok", "not run", None) for s in statuses)
        sc, w = c.realisation.scale, c.realisation.window
        row.update(
            scale_factor=sc.factor,
            volume_factor=sc.volume_factor,
            capacity_bps=sc.capacity_bps,
            access_bps=sc.access_bps,
            scaling=sc.mode,
            testbed_rtt_ms=sc.rtt_ms,
            buffer=sc.buffer,
            streams_per_source=c.realisation.streams_per_source,
            k=c.realisation.cls.k,
            rtt=rtt_text(tuple(c.realisation.cls.rtt_modes_ms or [c.realisation.cls.rtt_ms])),
            nominal_access_bps=sc.nominal_access_bps,
            background=c.realisation.background,
            window_segments=w.smallest_segments if w is not None else None,
            window_warning=w is not None and bool(w.warning),
        )
        rows.append(BenchRow(**row))
    comparisons = _comparisons(sweep, cells)
    if sweep.index.stopped_by:
        for comp in comparisons:
            if comp.verdict == "inconclusive":
                comp.stopped_by = sweep.index.stopped_by
    table = BenchTable(rows=rows, comparisons=comparisons)
    pd.DataFrame([r.model_dump(by_alias=True) for r in rows]).to_csv(
        sweep.out / "table.csv", index=False
    )
    table.save(sweep.out / "table.json")
    return table
