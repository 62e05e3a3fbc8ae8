"""The testbed options that change how an end host's TCP behaves, on SSH hosts as the
local backend has them (itb.emulation.plan):

- `ack_every_segment`: every route to the other end hosts acknowledges each segment at
  once (the route metric `quickack 1`), and the data interface hands TCP's segments over
  one per packet (TSO and GSO off);
- `open_receive_window`: the receive window starts as large as the buffer (the route
  metric `initrwnd`, and tcp_rmem's default at the buffer: itb.backends.ssh.deploy).

ITB does not touch a route it did not make: it adds one host route (/32) per peer, with
the device, gateway and source the kernel chose for that peer (`ip route get`) plus the
metrics; a host that already has a route of exactly that prefix is refused at
preflight. Each route and the interface's offload settings are recorded in the host's
state before they are made (itb.backends.ssh.deploy), and `restore` removes and puts back
exactly those (also `itb clean --inventory`).
"""

from __future__ import annotations

from collections.abc import Callable

from itb.backends.ssh.remote import Remote
from itb.emulation.plan import socket_buffer_max
from itb.errors import PreflightError
from itb.scenario.testbed.model import Topology

# ethtool -k's names of the offloads ack_every_segment turns off, and -K's
OFFLOADS = {"tcp-segmentation-offload": "tso", "generic-segmentation-offload": "gso"}


def wanted(topo: Topology) -> bool:
    return topo.ack_every_segment or topo.open_receive_window


def metrics(topo: Topology) -> list[str]:
    """The route metrics the options give (`ip route` words)."""
    out = ["quickack", "1"] if topo.ack_every_segment else []
    if topo.open_receive_window:  # the whole buffer, in segments, from the first ACK
        out += ["initrwnd", str(-(-socket_buffer_max(topo) // (topo.mtu - 52)))]
    return out


def peers(topo: Topology, plays: list[str]) -> list[str]:
    """The data addresses of the end hosts a host playing `plays` talks to."""
    return sorted({topo.address(h.name) for h in topo.hosts() if h.name not in plays})


def check(r: Remote, topo: Topology, plays: list[str]) -> None:
    """Preflight: ethtool there when the offloads change; no route of ITB's prefix to a
    peer already there (it would be someone else's)."""
    if topo.ack_every_segment:
        from itb.backends.ssh.hosts import missing_tools

        missing_tools(r, ("ethtool",))
    for peer in peers(topo, plays):
        have = r.run(["ip", "route", "show", "exact", f"{peer}/32"]).stdout.strip()
        if have:
            raise PreflightError(
                f"host {r.name}: a route to {peer}/32 is already there ({have}): the "
                "testbed's TCP options (ack_every_segment, open_receive_window) add their "
                "own; remove it, or run without those options"
            )


def apply(
    r: Remote, topo: Topology, plays: list[str], iface: str, state: dict, save: Callable[[], None]
) -> None:
    """The options on host r (its data interface `iface`), each change recorded in
    `state` and saved before it is made."""
    if topo.ack_every_segment:
        before = _offloads(r, iface)
        state["offloads"] = [[iface, before]]
        save()
        r.run(["ethtool", "-K", iface, *(w for short in OFFLOADS.values() for w in (short, "off"))])
    extra = metrics(topo)
    state.setdefault("routes", [])
    for peer in peers(topo, plays):
        how = _route_to(r, peer)
        state["routes"].append([f"{peer}/32", how])
        save()
        r.run(["ip", "route", "add", f"{peer}/32", *how, *extra])


def restore(r: Remote, state: dict) -> dict:
    """What `apply` recorded, undone (each step whatever the others do); counts."""
    for prefix, how in state.get("routes") or []:
        dev = how[how.index("dev") : how.index("dev") + 2] if "dev" in how else []
        r.run(["ip", "route", "del", prefix, *dev], check=False)
    for iface, before in state.get("offloads") or []:
        back = [w for name, value in before.items() for w in (OFFLOADS[name], value)]
        if back:
            r.run(["ethtool", "-K", iface, *back], check=False)
    return {"routes": len(state.get("routes") or []), "offloads": len(state.get("offloads") or [])}


def _route_to(r: Remote, peer: str) -> list[str]:
    """The device, gateway and source the kernel uses to reach `peer` (`ip route get`)."""
    words = r.run(["ip", "route", "get", peer]).stdout.split()
    how: list[str] = []
    for key in ("via", "dev", "src"):
        if key in words and words.index(key) + 1 < len(words):
            how += [key, words[words.index(key) + 1]]
    if "dev" not in how:
        raise PreflightError(f"host {r.name}: no route to {peer} (`ip route get {peer}`)")
    return how


def _offloads(r: Remote, iface: str) -> dict[str, str]:
    """The interface's current TSO and GSO settings ("on" / "off")."""
    out: dict[str, str] = {}
    for line in r.run(["ethtool", "-k", iface]).stdout.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in OFFLOADS and value.split():
            out[name.strip()] = value.split()[0]
    return out
