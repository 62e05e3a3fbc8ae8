"""Which inventory host plays which scenario node, and the scenario's topology with the
hosts' real data-plane addresses.

End hosts go by side: the scenario's left hosts on the inventory's `left` hosts, right
on `right`, one each, in name order, unless a host names the nodes it plays
(`nodes = [...]`). Routers are not placed: between the two sides the inventory's
network is the path — an emulator host running linkem as an L2 wire between its two
interfaces (the scenario's one emulated link), or, without an emulator host, the real
network (a switch port as bottleneck: measured by calibration, not configured).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from itb.backends.ssh.inventory import Inventory
from itb.errors import ScenarioError
from itb.scenario.testbed.model import Endpoint, Link, Topology


@dataclass(frozen=True)
class Placement:
    hosts: dict[str, str]  # scenario host → inventory host
    emulator: str | None  # the inventory's emulator host
    link: Link | None  # the scenario's emulated link it runs (None: the real network)

    def host_of(self, node: str) -> str:
        return self.hosts[node]


def _fail(inv: Inventory, field: str, what: str) -> ScenarioError:
    """The scenario and the inventory do not fit together: bad input (exit 2)."""
    return ScenarioError(inv.source or "inventory", field, what)


def place(topo: Topology, inv: Inventory, only: set[str] | None = None) -> Placement:
    """`only`: place just these scenario hosts (a calibration's pair)."""
    emulated = [lk for lk in topo.links if lk.emulated]
    if len(emulated) > 1:
        raise _fail(
            inv,
            "host",
            f"testbed {topo.name!r} emulates {len(emulated)} links; over SSH one "
            "emulator host runs one link (a dumbbell's bottleneck)",
        )
    for opt in ("ack_every_segment", "open_receive_window"):
        if getattr(topo, opt):
            raise _fail(
                inv,
                "(file)",
                f"testbed option {opt} is not available over SSH yet (it sets "
                "per-route metrics on the hosts); run it on the local backend",
            )
    em = inv.emulator()  # none: a real bottleneck, the inventory's network is the path
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
    return Placement(
        placed, em.name if em and emulated else None, emulated[0] if emulated and em else None
    )


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
