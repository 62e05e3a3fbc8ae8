"""Topology → ordered configuration steps per node (eWAN's generated scripts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from itb.emulation import actions as A
from itb.emulation import linkem, naming
from itb.emulation.routing import routes_for
from itb.scenario.testbed.model import Link, Topology

MIN_SOCKET_BUFFER = 16 * 1024 * 1024
MAX_SOCKET_BUFFER = 1 << 30
ASSUMED_UNLIMITED_BPS = 20_000_000_000  # the kernel path here tops at ~20 Gbit/s


@dataclass
class Plan:
    topology: Topology
    steps: list[A.Action] = field(default_factory=list)

    def emulators(self) -> list[A.StartEmulator]:
        return [s for s in self.steps if isinstance(s, A.StartEmulator)]

    def namespaces(self) -> list[str]:
        return [s.ns for s in self.steps if isinstance(s, A.CreateNetns)]

    def by_node(self) -> dict[str, list[A.Action]]:
        out: dict[str, list[A.Action]] = {}
        for s in self.steps:
            out.setdefault(s.node, []).append(s)
        return out


def path_bdp_bytes(topo: Topology) -> int:
    """Largest bandwidth-delay product over the emulated links (with the largest pair extra
    RTT): what a host's socket buffers must hold for one flow to fill the path."""
    extra = max((p.extra_rtt_us for p in topo.pair_delays), default=0)
    bdp = 0
    for link in topo.links:
        if not link.emulated:
            continue
        rate = min(d.rate_bps or ASSUMED_UNLIMITED_BPS for d in (link.forward, link.reverse))
        rtt_us = link.forward.delay_us + link.reverse.delay_us + extra
        bdp = max(bdp, rate * rtt_us // 8_000_000)
    return bdp


# Linux's tcp_rmem[1]: the receive buffer a socket starts from (its window grows from it)
RMEM_DEFAULT = 131072


def socket_buffer_max(topo: Topology) -> int:
    """Socket buffers sized to the BDP: 2 × BDP lets one flow fill the path (autotuning
    gives part of the buffer to overhead) while its window stays near BDP + one-BDP queue,
    so slow start does not overshoot into a burst of losses."""
    return max(MIN_SOCKET_BUFFER, min(MAX_SOCKET_BUFFER, 2 * path_bdp_bytes(topo)))


def tbf_params(rate_bps: int, mtu: int) -> tuple[int, int]:
    """Burst of 1 ms at the rate (≥ two frames) and a 20 ms queue."""
    per_ms = rate_bps // 8000
    burst = max(per_ms, 2 * (mtu + 14))
    limit = max(20 * per_ms, 4 * burst)
    return burst, limit


def _veth_steps(topo: Topology, link: Link) -> list[A.Action]:
    a_ns, b_ns = naming.node_ns(link.a.node), naming.node_ns(link.b.node)
    steps: list[A.Action] = []
    if link.emulated:
        em = naming.emulator_ns(link.name)
        ia, ib = linkem.EMULATOR_IFNAMES
        node = f"em-{link.name}"
        steps += [
            A.AddVeth(link.a.node, a_ns, link.a.ifname, em, ia, link.mtu),
            A.AddVeth(link.b.node, b_ns, link.b.ifname, em, ib, link.mtu),
            A.LinkUp(node, em, ia),
            A.LinkUp(node, em, ib),
        ]
    else:
        steps.append(A.AddVeth(link.a.node, a_ns, link.a.ifname, b_ns, link.b.ifname, link.mtu))
    steps += [
        A.LinkUp(link.a.node, a_ns, link.a.ifname),
        A.LinkUp(link.b.node, b_ns, link.b.ifname),
    ]
    for ep in (link.a, link.b):
        for addr in (ep.ipv4, ep.ipv6):
            if addr:
                steps.append(A.AddAddress(ep.node, naming.node_ns(ep.node), ep.ifname, addr))
    if not link.emulated:
        for ep, d in ((link.a, link.forward), (link.b, link.reverse)):
            if d.rate_bps:
                burst, limit = tbf_params(d.rate_bps, link.mtu)
                steps.append(
                    A.ShapeEgress(
                        ep.node, naming.node_ns(ep.node), ep.ifname, d.rate_bps, burst, limit
                    )
                )
    return steps


def build_plan(topo: Topology, log_root: Path | None = None, seed: int = 1) -> Plan:
    log_root = log_root or naming.state_dir() / "emulators"
    plan = Plan(topo)
    steps = plan.steps
    bufmax = socket_buffer_max(topo)
    for n in topo.nodes:
        ns = naming.node_ns(n.name)
        # No duplicate address detection: link-local addresses usable at once, so neighbour
        # discovery does not stall the first IPv6 packets for ~2 s.
        steps += [
            A.CreateNetns(n.name, ns),
            A.Sysctl(n.name, ns, "net.ipv6.conf.default.accept_dad", "0"),
            A.Sysctl(n.name, ns, "net.ipv6.conf.all.accept_dad", "0"),
        ]
        if n.role == "router":
            steps += [
                A.Sysctl(n.name, ns, "net.ipv4.ip_forward", "1"),
                A.Sysctl(n.name, ns, "net.ipv6.conf.all.forwarding", "1"),
            ]
        else:
            rmem_default = bufmax if topo.open_receive_window else RMEM_DEFAULT
            steps += [
                A.Sysctl(n.name, ns, "net.ipv4.tcp_rmem", f"4096 {rmem_default} {bufmax}"),
                A.Sysctl(n.name, ns, "net.ipv4.tcp_wmem", f"4096 16384 {bufmax}"),
                # Cached ssthresh/RTT from an earlier flow would make repetitions differ.
                A.Sysctl(n.name, ns, "net.ipv4.tcp_no_metrics_save", "1"),
                # A bulk sender briefly stalled by the CPU must not restart from slow start.
                A.Sysctl(n.name, ns, "net.ipv4.tcp_slow_start_after_idle", "0"),
            ]
    for link in topo.links:
        if link.emulated:
            em, node = naming.emulator_ns(link.name), f"em-{link.name}"
            # The emulator is an L2 wire: its interfaces get no addresses and send nothing.
            steps += [
                A.CreateNetns(node, em),
                A.Sysctl(node, em, "net.ipv6.conf.all.disable_ipv6", "1"),
                A.Sysctl(node, em, "net.ipv6.conf.default.disable_ipv6", "1"),
            ]
    for link in topo.links:
        steps += _veth_steps(topo, link)
    for n in topo.nodes:
        # where TCP ends, not routers: one ACK per segment, at once
        quickack = topo.ack_every_segment and n.role == "host"
        # a window as large as the buffer from the first ACK (the buffer caps it)
        initrwnd = (
            -(-bufmax // (topo.mtu - 52)) if topo.open_receive_window and n.role == "host" else None
        )
        for dst, via, fam in routes_for(topo, n.name):
            steps.append(
                A.AddRoute(n.name, naming.node_ns(n.name), dst, via, fam, quickack, initrwnd)
            )
    if topo.ack_every_segment:  # ... and one segment per packet: no TSO/GSO bursts
        for link in topo.links:
            for ep in (link.a, link.b):
                if topo.node(ep.node).role == "host":
                    steps.append(
                        A.NoSegmentationOffload(ep.node, naming.node_ns(ep.node), ep.ifname)
                    )
    emulator = linkem.binary_or_name()
    for link in topo.links:
        if link.emulated:
            log_dir = log_root / link.name
            steps.append(
                A.StartEmulator(
                    f"em-{link.name}",
                    naming.emulator_ns(link.name),
                    emulator,
                    log_dir / "linkem.json",
                    linkem.config_for(topo, link, log_dir, seed),
                )
            )
    return plan
