"""The L2 segments of an SSH testbed, and a scenario's routers on them.

Over SSH every host's data interface sits on an L2 segment (a switch, a VLAN, a cable),
and each emulator host's wire joins two segments through linkem: the wires of an
inventory make its segments one tree, so the frames between two hosts cross exactly the
wires between their segments. A scenario's routers map onto segments (one router, one
segment), its emulated links onto wires (by name, else in order) — a dumbbell's two
routers onto "left" and "right" — and each scenario host onto a free inventory host of
its router's segment. There are no IP routers: the hosts share one subnet, and the
path's hops are the wires (docs/ssh.md, "Topologies").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from itb.errors import ScenarioError
from itb.scenario.testbed.model import Link, Topology


class _Wire(Protocol):  # itb.backends.ssh.inventory.Wire (imported there, not here)
    @property
    def ifaces(self) -> tuple[str, str]: ...
    @property
    def between(self) -> tuple[str, str]: ...
    @property
    def link(self) -> str | None: ...


@dataclass(frozen=True)
class PlacedWire:
    link: Link  # the scenario's emulated link it runs
    host: str  # the emulator host
    ifaces: tuple[str, str]  # [facing link.a's segment, facing link.b's]: linkem's ab, ba
    segments: tuple[str, str]  # link.a's router's segment, link.b's


def _where(inv, host: str, k: int, part: str) -> str:
    """The field of wire k of a host: `wire[k].part`, or its `emulator_ifaces`."""
    h = inv.get(host)
    return f"host {host!r}." + (f"wire[{k}].{part}" if h.wire else "emulator_ifaces")


def check(inv, source: str | None) -> None:
    """Each wire's interfaces used once on its host; the wires join the end hosts'
    segments into one tree (a second path between two segments would be an L2 loop)."""
    wires = [(h.name, k, w) for h in inv.by_role("emulator") for k, w in enumerate(h.wires)]
    if not wires:
        return
    for h in inv.by_role("emulator"):
        used: dict[str, int] = {}
        for k, w in enumerate(h.wires):
            for i in w.ifaces:
                if i in used:
                    raise ScenarioError(
                        source,
                        _where(inv, h.name, k, "ifaces"),
                        f"{i} is also wire {used[i]}'s: one interface, one wire",
                    )
                used[i] = k
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for host, k, w in wires:
        a, b = (root(s) for s in w.between)
        if a == b:
            raise ScenarioError(
                source,
                _where(inv, host, k, "between"),
                f"segments {w.between[0]!r} and {w.between[1]!r} are joined already (through "
                "other wires): a second path between them would be an L2 loop",
            )
        parent[a] = b
    segs = set(parent)
    for h in inv.host:
        if h.role != "emulator" and h.seg not in segs:
            raise ScenarioError(
                source,
                f"host {h.name!r}.segment",
                f"segment {h.seg!r} is on no wire (the wires join {', '.join(sorted(segs))})",
            )
    groups: dict[str, list[str]] = {}
    for s in sorted(segs):
        groups.setdefault(root(s), []).append(s)
    if len(groups) > 1:
        parts = "; ".join(", ".join(g) for g in groups.values())
        raise ScenarioError(
            source, "host", f"the wires make {len(groups)} separate networks ({parts})"
        )


def assign(
    topo: Topology, wires: Sequence[tuple[str, _Wire]], source: str
) -> tuple[dict[str, str], list[PlacedWire]]:
    """Router → segment, and the wire each emulated link runs on (in the scenario's
    order); ScenarioError when the scenario's links do not fit the inventory's wires."""
    emulated = [lk for lk in topo.links if lk.emulated]
    names = {lk.name for lk in emulated}
    named: dict[str, tuple[str, _Wire]] = {}
    for host, w in wires:
        if w.link is not None:
            if w.link not in names:
                raise ScenarioError(
                    source,
                    f"host {host!r}.wire.link",
                    f"the scenario has no emulated link {w.link!r} "
                    f"(it has {', '.join(sorted(names)) or 'none'})",
                )
            if w.link in named:
                raise ScenarioError(
                    source,
                    f"host {host!r}.wire.link",
                    f"link {w.link!r} is named by another wire too ({named[w.link][0]}'s)",
                )
            named[w.link] = (host, w)
    free = [(h, w) for h, w in wires if w.link is None]  # in the file's order
    if len(emulated) > len(wires):
        raise ScenarioError(
            source,
            "host",
            f"testbed {topo.name!r} emulates {len(emulated)} links "
            f"({', '.join(lk.name for lk in emulated)}) but the inventory has "
            f"{len(wires)} wire(s) (`itb lab up --topology chain|star --links N` makes more)",
        )
    # the links in the order of a walk from the first (each after one it touches), each
    # laid on a wire (its own if named) whose two segments its routers may take
    order = [emulated[0]] if emulated else []
    rest = emulated[1:]
    while rest:
        placed_routers = {n for lk in order for n in (lk.a.node, lk.b.node)}
        k = next((k for k, lk in enumerate(rest) if {lk.a.node, lk.b.node} & placed_routers), 0)
        order.append(rest.pop(k))
    seg_of: dict[str, str] = {}
    laid: list[PlacedWire] = []

    def fits(node: str, seg: str) -> bool:
        have = seg_of.get(node)
        return have == seg if have is not None else seg not in seg_of.values()

    def lay(i: int, used: set[int]) -> bool:
        if i == len(order):
            return True
        lk = order[i]
        choices = [named[lk.name]] if lk.name in named else free
        for host, w in choices:
            if id(w) in used:
                continue
            for (s0, s1), (i0, i1) in ((w.between, w.ifaces), (w.between[::-1], w.ifaces[::-1])):
                if not (fits(lk.a.node, s0) and fits(lk.b.node, s1)):
                    continue
                new = [n for n in (lk.a.node, lk.b.node) if n not in seg_of]
                seg_of.update({lk.a.node: s0, lk.b.node: s1})
                laid.append(PlacedWire(lk, host, (i0, i1), (s0, s1)))
                if lay(i + 1, used | {id(w)}):
                    return True
                laid.pop()
                for n in new:
                    del seg_of[n]
        return False

    if not lay(0, set()):
        links = ", ".join(f"{lk.a.node}–{lk.b.node}" for lk in emulated)
        have = "; ".join(
            f"{host}: {w.between[0]}–{w.between[1]}" + (f" (link {w.link})" if w.link else "")
            for host, w in wires
        )
        raise ScenarioError(
            source,
            "host",
            f"testbed {topo.name!r}'s emulated links ({links}) cannot be laid on the "
            f"inventory's wires ({have}) with each router on a segment of its own: the "
            "wires must join the segments as the links join the routers",
        )
    index = {lk.name: k for k, lk in enumerate(emulated)}
    return seg_of, sorted(laid, key=lambda p: index[p.link.name])


def router_of(topo: Topology, host: str) -> str | None:
    """The router a scenario host's access link leads to."""
    for lk in topo.links:
        ends = (lk.a.node, lk.b.node)
        if host in ends:
            other = ends[1] if ends[0] == host else ends[0]
            if topo.node(other).role == "router":
                return other
    return None
