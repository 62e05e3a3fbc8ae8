"""The plan of `itb study predictability`: the points (protocol × congestion level ×
reverse level × spacing), each a BU cell on a K = 10 dumbbell scaled like the benchmark's
classes, every forward source starting within `max_span` of one transfer's time; and what
the ideal protocol would give on a point's plan."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from itb.analysis.fairshare import ideal_completion_times, source_cap_bps, tcp_payload_share
from itb.errors import ScenarioError
from itb.scenario.units import parse_duration, parse_rate, parse_size
from itb.study.options import SYMMETRIC
from itb.study.predictability.args import PredictabilityArgs
from itb.study.predictability.cells import PredictabilityCell
from itb.suite import apps
from itb.suite.classes import DATA_CENTRE_K, ItbClass
from itb.suite.realisation import Realisation
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell


@dataclass(frozen=True)
class Point:
    cc: str
    c_g: float
    reverse: float | str
    spacing_s: float

    @property
    def r_level(self) -> float:
        return self.c_g if self.reverse == SYMMETRIC else float(self.reverse)

    @property
    def name(self) -> str:
        return f"{self.cc}-cg{self.c_g:g}-r{self.reverse}-s{self.spacing_s:g}"


def points_of(a: PredictabilityArgs) -> list[Point]:
    pts = [Point(cc, cg, r, a.spacing_s) for cc in a.ccs for r in a.reverse for cg in a.c_g]
    if a.spacing_s != 0:
        first_r = a.reverse[0]
        pts += [Point(cc, a.sync_c_g, first_r, 0.0) for cc in a.ccs]
        if a.sync_c_g not in a.c_g:  # its spaced counterpart
            pts += [Point(cc, a.sync_c_g, first_r, a.spacing_s) for cc in a.ccs]
    have = {(p.cc, p.c_g, p.reverse, p.spacing_s) for p in pts}
    pts += [
        Point(cc, a.sync_c_g, r, a.spacing_s)
        for cc in a.ccs
        for r in a.r_levels
        if (cc, a.sync_c_g, r, a.spacing_s) not in have
    ]
    return pts


def _class_of(p: Point, rtt_ms: float) -> ItbClass:
    return ItbClass(
        "P",
        DATA_CENTRE_K,
        rtt_ms,
        p.c_g,
        p.r_level,
        f"predictability point C_g {p.c_g:g}, R {p.reverse}",
    )


def planned_ideal(doc: dict) -> list[float]:
    """Completion times the ideal protocol would have on a point's plan: the forward
    transfers' starts, volumes and access rates from the scenario, sharing the
    bottleneck's TCP payload rate max-min fairly (no slow start, no loss)."""
    fwd = [t for t in doc["transfer"] if t["id"].startswith("bu.")]
    share = tcp_payload_share()
    # a source's rate is a pacing cap, which Linux applies to the payload (fairshare)
    return ideal_completion_times(
        [parse_duration(t["at"]) / 1e6 for t in fwd],
        [parse_size(t["volume"]) for t in fwd],
        [source_cap_bps(None, parse_rate(t["rate"]), share) for t in fwd],
        parse_rate(doc["bottleneck"]["rate"]),
        payload_share=share,
    )


def sweep_of(a: PredictabilityArgs, out: Path) -> Sweep[PredictabilityCell]:
    cells = []
    for p in points_of(a):
        cls = _class_of(p, a.rtt_ms)
        if cls.forward_sources < 1:
            raise ScenarioError(
                None, "--cg", f"C_g {p.c_g:g} gives no source at K = {DATA_CENTRE_K}"
            )
        cell = apps.Cell("BU", cls, p.cc)
        cs = a.scale.of(cls)
        g = apps.bulk(cell, cs, p.spacing_s, max_start_span=a.max_span, reverse_after=True)
        g.doc["experiment"].update(repetitions=a.repeat, seed=a.seed, name=f"pred-{p.name}")
        g.doc["testbed"]["name"] = f"pred-{p.name}"[:64]
        cells.append(
            SweepCell(
                PredictabilityCell(
                    name=p.name,
                    cc=p.cc,
                    c_g=p.c_g,
                    reverse=p.reverse,
                    r_level=p.r_level,
                    spacing_s=p.spacing_s,
                    spacing_realised_s=g.realisation["spacing_s"],
                    c_g_realised=cls.c_g_realised,
                    realisation=Realisation.model_validate(g.realisation | {"scale": cs.to_json()}),
                ),
                g.doc,
            )
        )
    return Sweep(
        out, "predictability", SweepIndex[PredictabilityCell], a.key(), cells, a.repeat, a.seed
    )
