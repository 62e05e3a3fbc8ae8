"""The applications by name: which exist, their variants, and `generate`, which builds
a cell's scenario with its family's generator and records how the class was realised."""

from __future__ import annotations

from itb.errors import ScenarioError
from itb.suite import windows
from itb.suite.apps.bulk import bu
from itb.suite.apps.parts import UDT, Cell, Generated
from itb.suite.apps.pingpong import PA_MESSAGES, pa
from itb.suite.apps.throughput import tu
from itb.suite.apps.web import pp, wm
from itb.suite.background import Background
from itb.suite.classes import ItbClass
from itb.suite.scaling import ClassScale

APPS = ("TU", "WM", "PP", "BU", "PA")
NO_BACKGROUND = Background()
UDT_REFUSED = {
    "PA": "is a ping-pong, and itb-udt moves one volume one way",
    "TU": "tunes TCP's socket buffers (UDT sizes its own)",
}
RTT_MIX_REFUSED = {
    "TU": "measures one host pair",
    "PA": "measures one ping-pong between two hosts",
    "WM": "draws each pair's RTT from an exponential distribution around the class RTT",
    "PP": "draws each pair's RTT from a Poisson distribution around the class RTT",
}


def variants(app: str) -> list[str | None]:
    return ["default", "tuned"] if app == "TU" else [None]


def check_app(app: str) -> str:
    if app not in APPS:
        raise ScenarioError(
            None, "--app", f"unknown application {app!r}; applications are {', '.join(APPS)}"
        )
    return app


def generate(
    cell: Cell,
    cs: ClassScale,
    seed: int,
    spacing_s: float,
    repetitions: int = 1,
    pa_messages: int = PA_MESSAGES,
    streams_per_source: int = 1,
    background: Background = NO_BACKGROUND,
) -> Generated:
    """One cell's scenario and how it realised the class. `streams_per_source` (N_s)
    applies to BU's forward sources; the other applications keep one stream a source.
    `background` (B) is added to every application's scenario on a host pair of its own."""
    if cell.cls.rtt_modes_ms and check_app(cell.app) != "BU":
        raise ScenarioError(
            None,
            "--rtt",
            f"an RTT mix applies to BU (RR-6244 §4.5.3: one mode per pair of sites); {cell.app} "
            + RTT_MIX_REFUSED.get(cell.app, "")
            + ": give one RTT, or run the mix with --app BU",
        )
    if cell.cc == UDT and cell.app in UDT_REFUSED:
        raise ScenarioError(None, "--cc", f"udt: {cell.app} {UDT_REFUSED[cell.app]}")
    if check_app(cell.app) == "PA":
        g = pa(cell, cs, seed, spacing_s, pa_messages)
    elif cell.app == "BU":
        g = bu(cell, cs, seed, spacing_s, streams_per_source)
    else:
        g = {"TU": tu, "WM": wm, "PP": pp}[cell.app](cell, cs, seed, spacing_s)
    g.doc["experiment"].update(repetitions=repetitions, seed=seed)
    said = background.add_to(g.doc, cs)
    if said:
        g.realisation["background"] = background.text
        g.realisation.setdefault("notes", []).append(said)
    window = g.window or windows.of_source(cell.cls, cs)
    g.realisation.update(
        scale=cs.to_json(),
        cls=_class_json(cell.cls),
        app=cell.app,
        variant=cell.variant,
        cc=cell.cc,
        window=window.to_json(),
    )
    if cs.mode == "window":
        g.realisation.setdefault("notes", []).append(
            f"window scaling: the class RTT {cell.cls.rtt_ms:g} ms × {cs.factor:g} = "
            f"{cs.rtt_ms:g} ms on every path, so a source's window C_a · RTT is the documents' "
            "while every time counted in round trips lasts the factor longer"
        )
    return g


def _class_json(c: ItbClass) -> dict:
    return (
        {
            "name": c.name,
            "k": c.k,
            "rtt_ms": c.rtt_ms,
            "c_g": c.c_g,
            "r": c.r,
            "meaning": c.meaning,
            "forward_sources": c.forward_sources,
            "reverse_sources": c.reverse_sources,
        }
        | ({"rtt_modes_ms": list(c.rtt_modes_ms)} if c.rtt_modes_ms else {})
        | (
            {"forward_share": c.forward_share, "reverse_share": c.reverse_share}
            if (c.forward_share, c.reverse_share) != (1.0, 1.0)
            else {}
        )
    )
