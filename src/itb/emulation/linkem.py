"""The link emulator (native/linkem): where its binary is, and its JSON configuration."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from itb import native
from itb.emulation import monitor
from itb.errors import PreflightError
from itb.scenario.testbed.model import Direction, Link, Loss, Topology
from itb.scenario.testbed.paths import path_links

EMULATOR_IFNAMES = ("a0", "b0")  # inside the emulator namespace: a0 faces link.a, b0 link.b


def binary() -> str:
    """ITB_LINKEM, else the workspace build next to the sources, else PATH."""
    return native.binary("linkem")


def binary_or_name() -> str:
    """For showing a plan: the binary if built, else its bare name."""
    try:
        return binary()
    except PreflightError:
        return "linkem"


# One direction of a link as linkem and itb-sim read it: its fields are defined once, in
# this JSON schema (tests/unit/test_direction_format.py holds the writers to it)
DIRECTION_FORMAT = native.REPO / "native" / "linkem" / "direction-format.json"


def direction_json(d: Direction) -> dict:
    """A direction as configured (the schema's `direction`)."""
    return {
        "rate_bps": d.rate_bps,
        "delay_us": d.delay_us,
        "queue_bytes": d.queue_bytes,
        "queue_packets": d.queue_packets,
        "loss": d.loss.model_dump(mode="json"),
    }


UNCHANGED: object = object()  # (a field an update leaves as it is)


def update_json(
    direction: str,
    rate_bps: int | None | object = UNCHANGED,
    delay_us: int | None = None,
    loss: Loss | None = None,
) -> dict:
    """A change of one direction while the emulator runs (the schema's `update`): the
    fields given (rate_bps None: unlimited from now on)."""
    cmd: dict = {"dir": direction}
    if rate_bps is not UNCHANGED:
        cmd["rate_bps"] = rate_bps
    if delay_us is not None:
        cmd["delay_us"] = delay_us
    if loss is not None:
        cmd["loss"] = loss.model_dump(mode="json")
    return cmd


def _host_addresses(topo: Topology, host: str) -> list[str]:
    out = []
    for link in topo.links:
        for ep in (link.a, link.b):
            if ep.node == host:
                out += [str(ipaddress.ip_interface(a).ip) for a in (ep.ipv4, ep.ipv6) if a]
    return out


def pair_delays_for(topo: Topology, link: Link) -> list[dict]:
    """Per-pair extra delay entries this emulated link applies: each pair's extra RTT is
    added once, at the first emulated link of its path, half in each direction."""
    entries = []
    for pd in topo.pair_delays:
        emulated = [lk for lk in path_links(topo, pd.src, pd.dst) if lk.emulated]
        if not emulated or emulated[0].name != link.name:
            continue
        one_way = pd.extra_rtt_us // 2
        src_addrs, dst_addrs = _host_addresses(topo, pd.src), _host_addresses(topo, pd.dst)
        for s in src_addrs:
            for d in dst_addrs:
                if ipaddress.ip_address(s).version != ipaddress.ip_address(d).version:
                    continue
                entries.append({"src": s, "dst": d, "extra_us": one_way})
                entries.append({"src": d, "dst": s, "extra_us": one_way})
    return entries


def config_for(topo: Topology, link: Link, log_dir: Path, seed: int = 1) -> dict:
    return {
        "interfaces": list(EMULATOR_IFNAMES),
        "seed": seed,
        "interval_us": 1000,
        "chunk_us": 100,
        "late_threshold_us": 200,
        "spin_us": 0,
        "log_dir": str(log_dir),
        "log_segment_bytes": monitor.LOG_SEGMENT_BYTES,
        "log_keep_bytes": monitor.LOG_KEEP_BYTES,
        "directions": {"ab": direction_json(link.forward), "ba": direction_json(link.reverse)},
        "pair_delays": pair_delays_for(topo, link),
    }
