"""Which inventory host plays which scenario node, and the scenario's topology with the
hosts' real data-plane addresses.

With emulator hosts, the scenario's routers map onto the inventory's L2 segments and its
emulated links onto the emulator hosts' wires (itb.backends.ssh.segments); each scenario
host goes on a free inventory host of its router's segment, in name order, unless a
host names the nodes it plays (`nodes = [...]`). Without an emulator host (a dumbbell
only) the hosts go by side, left on `left`, right on `right`, and the real network
between them is the path (a switch port as bottleneck: measured by calibration, not
configured).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from itb.backends.ssh import segments
from itb.backends.ssh.inventory import Inventory
from itb.backends.ssh.segments import PlacedWire
from itb.errors import ScenarioError
from itb.scenario.testbed.model import Endpoint, Link, Topology


@dataclass(frozen=True)
class Placement:
    hosts: dict[str, str]  # scenario host → inventory host
    wires: tuple[PlacedWire, ...] = ()  # each emulated link's wire (none: the real network)

    def host_of(self, node: str) -> str:
        return self.hosts[node]

    @property
    def emulator(self) -> str | None:
        """The first emulator host (None: the real network is the path)."""
        return self.wires[0].host if self.wires else None

    @property
    def link(self) -> Link | None:
        return self.wires[0].link if self.wires else None

    @property
    def emulators(self) -> dict[str, str]:
        """Emulated link → the emulator host that runs it."""
        return {w.link.name: w.host for w in self.wires}


def _fail(inv: Inventory, field: str, what: str) -> ScenarioError:
    """The scenario and the inventory do not fit together: bad input (exit 2)."""
    return ScenarioError(inv.source or "inventory", field, what)


def place(topo: Topology, inv: Inventory, only: set[str] | None = None) -> Placement:
    """`only`: place just these scenario hosts (a calibration's pair)."""
    emulated = [lk for lk in topo.links if lk.emulated]
    wires = inv.all_wires()
    if len(emulated) > 1 and not wires:
        raise _fail(
            inv,
            "host",
            f"testbed {topo.name!r} emulates {len(emulated)} links: over SSH each needs "
            "a wire of an emulator host (the real network stands in for a dumbbell's one)",
        )
    source = inv.source or "inventory"
    seg_of, on_wires = segments.assign(topo, wires, source) if wires and emulated else ({}, [])
    placed: dict[str, str] = {}
    claimed: dict[str, str] = {}  # scenario host → the inventory host that names it
    for h in inv.host:
        for node in h.nodes or ():
            if node in claimed:
                raise _fail(
                    inv,
                    f"host {h.name!r}.nodes",
                    f"{node!r} is already played by {claimed[node]!r}",
                )
            claimed[node] = h.name
    hosts = [n for n in topo.hosts() if only is None or n.name in only]
    names = {n.name for n in topo.hosts()}
    for node, host_name in claimed.items():
        if node not in names:
            raise _fail(
                inv,
                f"host {host_name!r}.nodes",
                f"the scenario has no host {node!r} (it has {', '.join(sorted(names))})",
            )
        if only is None or node in only:
            placed[node] = host_name
    if seg_of:
        placed |= _by_segment(topo, inv, [n.name for n in hosts if n.name not in placed], seg_of)
    for side in ("left", "right"):
        want = [n.name for n in hosts if n.side == side and n.name not in placed]
        free = [h.name for h in inv.by_role(side) if not h.nodes]
        if len(free) < len(want):
            raise _fail(
                inv,
                "host",
                f"the scenario has {len(want)} {side} host(s) to place "
                f"({', '.join(want)}) but the inventory has {len(free)} free host(s) "
                f'with role = "{side}"' + (" (`itb lab up --hosts N` makes more)" if want else ""),
            )
        placed |= dict(zip(sorted(want, key=_natural), sorted(free, key=_natural)))
    core = [n.name for n in hosts if n.side == "core" and n.name not in placed]
    if core:
        raise _fail(
            inv,
            "host",
            f"host(s) {', '.join(core)} sit in the core: name the inventory host "
            "that plays each (`nodes = [...]`)",
        )
    return Placement(placed, tuple(on_wires))


def _by_segment(
    topo: Topology, inv: Inventory, want: list[str], seg_of: dict[str, str]
) -> dict[str, str]:
    """Scenario hosts onto free inventory hosts of their routers' segments."""
    out: dict[str, str] = {}
    by_seg: dict[str, list[str]] = {}
    for node in want:
        router = segments.router_of(topo, node)
        seg = seg_of.get(router or "")
        if seg is None:
            raise _fail(inv, "host", f"host {node}'s router {router} is on no emulated link")
        by_seg.setdefault(seg, []).append(node)
    for seg, nodes in sorted(by_seg.items()):
        free = [h.name for h in inv.host if h.seg == seg and not h.nodes]
        if len(free) < len(nodes):
            raise _fail(
                inv,
                "host",
                f"the scenario has {len(nodes)} host(s) on segment {seg!r} "
                f"({', '.join(sorted(nodes, key=_natural))}) but the inventory has "
                f"{len(free)} free host(s) there (`itb lab up --hosts N` makes more)",
            )
        out |= dict(zip(sorted(nodes, key=_natural), sorted(free, key=_natural)))
    return out


def _natural(name: str) -> tuple:
    import re

    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def placed_topology(topo: Topology, inv: Inventory, placement: Placement) -> Topology:
    """The topology whose host endpoints carry the inventory's data-plane addresses (what
    the programs connect to and linkem's per-pair delays match)."""

    def swap(ep: Endpoint) -> Endpoint:
        host = placement.hosts.get(ep.node)
        if host is None:
            return ep
        _iface, addr = inv.data_plane(host)
        v6 = ipaddress.ip_interface(addr).version == 6
        return ep.model_copy(update={"ipv4": None if v6 else addr, "ipv6": addr if v6 else None})

    links = tuple(lk.model_copy(update={"a": swap(lk.a), "b": swap(lk.b)}) for lk in topo.links)
    return topo.model_copy(update={"links": links})


def access_rate_bps(topo: Topology, node: str) -> int | None:
    """The rate of a host's access link in its sending direction (shaped at its data
    interface's egress over SSH)."""
    for lk in topo.links:
        if lk.emulated:
            continue
        if lk.a.node == node:
            return lk.forward.rate_bps
        if lk.b.node == node:
            return lk.reverse.rate_bps
    return None
