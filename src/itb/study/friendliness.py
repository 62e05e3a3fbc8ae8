"""`itb study friendliness` (docs/friendliness.md): inter-protocol fairness measured by
completion times (INRIA RR-6244 §4.2.3).

Points: for each tested protocol and congestion level, a BU cell on a K = 10 dumbbell
(the predictability study's plan: starts within a small span, so the plan adds no
effect) whose forward sources alternate between the tested protocol and the reference
TCP, tested first (bu.1, bu.3, ... tested; bu.2, bu.4, ... reference), so neither group
starts ahead; and, once per congestion level, the same cell with every source on the
reference: the reference's T without the tested protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from itb.analysis.cells import cell_transfers
from itb.analysis.compare import compare_all
from itb.analysis.friendliness import Group, GroupRun, Point, Results, group_runs, ratios
from itb.analysis.statistics import mean_ci
from itb.bench import apps
from itb.bench.classes import DATA_CENTRE_K, ItbClass
from itb.bench.scaling import Scale
from itb.bench.sweep import Outcome, Sweep, SweepCell, drive
from itb.errors import ScenarioError

Say = Callable[[str], None]
ALONE = "alone"


@dataclass(frozen=True)
class FriendArgs:
    ccs: tuple[str, ...]  # tested
    reference: str
    c_g: tuple[float, ...]
    rtt_ms: float
    repeat: int
    seed: int
    scale: Scale
    max_span: float

    def key(self) -> dict:
        return {"ccs": list(self.ccs), "reference": self.reference, "c_g": list(self.c_g),
                "rtt_ms": self.rtt_ms, "repeat": self.repeat, "seed": self.seed,
                "scale": self.scale.to_json(), "max_span": self.max_span}


def _name(tested: str, reference: str, c_g: float) -> str:
    return f"{tested}-vs-{reference}-cg{c_g:g}" if tested != ALONE else f"{reference}-alone-cg{c_g:g}"


def mixed(doc: dict, tested: str, reference: str) -> dict:
    """The forward sources alternate: odd ones the tested protocol, even ones the
    reference (the reverse sources, if any, keep the tested one)."""
    for k, t in enumerate(x for x in doc["transfer"] if x["id"].startswith("bu.")):
        t["cc"] = tested if k % 2 == 0 else reference
    return doc


def sweep_of(a: FriendArgs, out: Path) -> Sweep:
    if a.reference in a.ccs:
        raise ScenarioError(None, "--cc", f"{a.reference} is the reference; test other protocols")
    cells = []
    for c_g in a.c_g:
        cls = ItbClass("F", DATA_CENTRE_K, a.rtt_ms, c_g, 0.0, f"friendliness point C_g {c_g:g}")
        if cls.forward_sources < 2:
            raise ScenarioError(None, "--cg", f"C_g {c_g:g} gives fewer than 2 sources at "
                                              f"K = {DATA_CENTRE_K}: no group to compare")
        cs = a.scale.of(cls)
        for tested in (*a.ccs, ALONE):
            cc = a.reference if tested == ALONE else tested
            g = apps.bulk(apps.Cell("BU", cls, cc), cs, 1.0, max_start_span=a.max_span)
            if tested != ALONE:
                mixed(g.doc, tested, a.reference)
            name = _name(tested, a.reference, c_g)
            g.doc["experiment"].update(repetitions=a.repeat, seed=a.seed, name=f"friend-{name}")
            g.doc["testbed"]["name"] = f"friend-{name}"[:64]
            cells.append(SweepCell(name, g.doc, {
                "tested": tested, "reference": a.reference, "c_g": c_g,
                "c_g_realised": cls.c_g_realised,
                "realisation": g.realisation | {"scale": cs.to_json()}}))
    return Sweep(out, "friendliness", a.key(), cells, a.repeat, a.seed)


def run_study(a: FriendArgs, out: Path, say: Say = print,
              tick: Say = lambda s: None) -> Outcome[Results]:
    from itb.report.build import analyse_run
    from itb.report.friendliness import build_friendliness_report

    return drive(sweep_of(a, out), analyse,
                 lambda sw, res: build_friendliness_report(out, sw.state, res), say, tick,
                 analyse_run)


def _runs(sweep: Sweep, cell: dict) -> list[GroupRun]:
    tr = cell_transfers(sweep.out, cell)
    return group_runs(tr) if tr is not None and len(tr) else []


def _group(runs: list[GroupRun], cc: str, sources: int) -> Group:
    mine = [r for r in runs if r.cc == cc]
    t, ci = mean_ci(r.t_mean for r in mine)
    return Group(cc=cc, sources=max((r.sources for r in mine), default=sources),
                 repetitions=len(mine), completed=sum(r.completed for r in mine),
                 failed=sum(r.failed for r in mine), t_mean=t, t_mean_ci95=ci)


def _sources(cell: dict, cc: str) -> int:
    n = int(round(cell["c_g_realised"] * DATA_CENTRE_K))
    if cell["tested"] == ALONE:
        return n
    return (n + 1) // 2 if cc == cell["tested"] else n // 2


def analyse(sweep: Sweep) -> Results:
    cells = sweep.state["cells"]
    alone = {c["c_g"]: c for c in cells if c["tested"] == ALONE}
    pending = []
    for c in (c for c in cells if c["tested"] != ALONE):
        runs, ref = _runs(sweep, c), c["reference"]
        base = alone.get(c["c_g"])
        base_runs = _runs(sweep, base) if base else []
        rs = ratios(runs, c["tested"], ref)
        r, r_ci = mean_ci(rs)
        pending.append((c, runs, base_runs, r, r_ci, len(rs)))
    # one table: Holm over every point's "reference next to the tested vs alone"
    cost = compare_all([(f"{c['reference']} next to {c['tested']}",
                         [x.t_mean for x in runs if x.cc == c["reference"]],
                         f"{c['reference']} alone",
                         [x.t_mean for x in base if x.cc == c["reference"]])
                        for c, runs, base, *_ in pending])
    points = []
    for (c, runs, base, r, r_ci, n), comp in zip(pending, cost):
        ref = c["reference"]
        points.append(Point(
            name=c["name"], tested=c["tested"], reference=ref, c_g=c["c_g"],
            c_g_realised=c["c_g_realised"],
            tested_group=_group(runs, c["tested"], _sources(c, c["tested"])),
            reference_group=_group(runs, ref, _sources(c, ref)),
            reference_alone=_group(base, ref, _sources(alone[c["c_g"]], ref)) if base else None,
            ratio=r, ratio_ci95=r_ci, ratio_runs=n,
            reference_cost=comp if base else None))
    res = Results(points=points)
    res.save(sweep.out / "results.json")
    return res
