"""The plan of `itb study friendliness`: per tested protocol and congestion level, a BU
cell on a K = 10 dumbbell whose forward sources alternate between the tested protocol and
the reference, tested first; and per congestion level the same cell with every source on
the reference (the reference alone)."""

from __future__ import annotations

from pathlib import Path

from itb.errors import ScenarioError
from itb.study.friendliness.args import FriendlinessArgs
from itb.study.friendliness.cells import FriendlinessCell
from itb.suite import apps
from itb.suite.classes import DATA_CENTRE_K, ItbClass
from itb.suite.realisation import Realisation
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell

ALONE = "alone"


def _name(tested: str, reference: str, c_g: float) -> str:
    return (
        f"{tested}-vs-{reference}-cg{c_g:g}" if tested != ALONE else f"{reference}-alone-cg{c_g:g}"
    )


def mixed(doc: dict, tested: str, reference: str) -> dict:
    """The forward sources alternate: odd ones the tested protocol, even ones the
    reference (the reverse sources, if any, keep the tested one)."""
    for k, t in enumerate(x for x in doc["transfer"] if x["id"].startswith("bu.")):
        t["cc"] = tested if k % 2 == 0 else reference
    return doc


def sweep_of(a: FriendlinessArgs, out: Path) -> Sweep[FriendlinessCell]:
    if a.reference in a.ccs:
        raise ScenarioError(None, "--cc", f"{a.reference} is the reference; test other protocols")
    cells = []
    for c_g in a.c_g:
        cls = ItbClass("F", DATA_CENTRE_K, a.rtt_ms, c_g, 0.0, f"friendliness point C_g {c_g:g}")
        if cls.forward_sources < 2:
            raise ScenarioError(
                None,
                "--cg",
                f"C_g {c_g:g} gives fewer than 2 sources at "
                f"K = {DATA_CENTRE_K}: no group to compare",
            )
        cs = a.scale.of(cls)
        for tested in (*a.ccs, ALONE):
            cc = a.reference if tested == ALONE else tested
            g = apps.bulk(apps.Cell("BU", cls, cc), cs, 1.0, max_start_span=a.max_span)
            if tested != ALONE:
                mixed(g.doc, tested, a.reference)
            name = _name(tested, a.reference, c_g)
            g.doc["experiment"].update(repetitions=a.repeat, seed=a.seed, name=f"friend-{name}")
            g.doc["testbed"]["name"] = f"friend-{name}"[:64]
            cells.append(
                SweepCell(
                    FriendlinessCell(
                        name=name,
                        tested=tested,
                        reference=a.reference,
                        c_g=c_g,
                        c_g_realised=cls.c_g_realised,
                        realisation=Realisation.model_validate(
                            g.realisation | {"scale": cs.to_json()}
                        ),
                    ),
                    g.doc,
                )
            )
    return Sweep(
        out, "friendliness", SweepIndex[FriendlinessCell], a.key(), cells, a.repeat, a.seed
    )
