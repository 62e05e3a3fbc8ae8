"""What the configuration promises between two hosts: RTT, bottleneck rate, queue (the
expectations a calibration checks, the ideal completion times, the quick calibration)."""

from __future__ import annotations

from dataclasses import dataclass

from itb.scenario.testbed.model import Direction, Link, Topology
from itb.scenario.testbed.paths import path_links


@dataclass(frozen=True)
class PathSpec:
    src: str
    dst: str
    rtt_us: int
    rate_bps: int | None  # None: nothing limits the path but the machine
    bottleneck: Link | None  # the emulated link that sets the rate (None if not emulated)
    forward: Direction | None  # the bottleneck's direction src → dst
    loss: float  # end-to-end loss probability src → dst
    direction: str = "ab"  # the bottleneck emulator's direction carrying src → dst
    # the longest queueing delay all the emulated links' queues src → dst can add together
    # (a burst from a fast access link queues at a slower link before the bottleneck);
    # None: one of them is unbounded
    path_queue_delay_us: float | None = 0.0

    @property
    def queue_delay_us(self) -> float | None:
        """Longest queueing delay the bottleneck queue can add (None: unbounded/unknown)."""
        d = self.forward
        if d is None or d.rate_bps is None:
            return 0.0 if d is not None else None
        if d.queue_bytes is not None:
            return d.queue_bytes * 8e6 / d.rate_bps
        return None

    @property
    def bdp_bytes(self) -> int | None:
        return None if self.rate_bps is None else self.rate_bps * self.rtt_us // 8_000_000


def path_spec(topo: Topology, src: str, dst: str) -> PathSpec:
    links = path_links(topo, src, dst)
    node = src
    fwd_delay = rev_delay = 0
    rate: int | None = None
    bottleneck = None
    bottleneck_dir = None
    em_direction = {}
    delivered = 1.0
    queues: float | None = 0.0
    for link in links:
        forward = link.a.node == node
        out, back = (link.forward, link.reverse) if forward else (link.reverse, link.forward)
        node = link.b.node if forward else link.a.node
        em_direction[link.name] = "ab" if forward else "ba"
        fwd_delay += out.delay_us
        rev_delay += back.delay_us
        delivered *= 1 - out.loss.mean_rate()
        if link.emulated and out.rate_bps is not None and queues is not None:
            queues = (
                None if out.queue_bytes is None else queues + out.queue_bytes * 8e6 / out.rate_bps
            )
        if out.rate_bps is not None and (rate is None or out.rate_bps <= rate):
            rate = out.rate_bps
            if link.emulated:
                bottleneck, bottleneck_dir = link, out
        if link.emulated and bottleneck is None:
            bottleneck, bottleneck_dir = link, out
    extra = sum(p.extra_rtt_us for p in topo.pair_delays if {p.src, p.dst} == {src, dst})
    return PathSpec(
        src,
        dst,
        fwd_delay + rev_delay + extra,
        rate,
        bottleneck,
        bottleneck_dir,
        1 - delivered,
        em_direction[bottleneck.name] if bottleneck is not None else "ab",
        queues,
    )


def default_pair(topo: Topology) -> tuple[str, str]:
    """A left host and a right host (the dumbbell's l1 → r1); else the first two hosts."""
    hosts = topo.hosts()
    left = [h.name for h in hosts if h.side == "left"]
    right = [h.name for h in hosts if h.side == "right"]
    if left and right:
        return left[0], right[0]
    if len(hosts) < 2:
        raise ValueError("calibration needs at least two hosts")
    return hosts[0].name, hosts[-1].name
