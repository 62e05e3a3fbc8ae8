"""Resolved testbed: the validated, backend-independent form a scenario compiles to.

Everything here is explicit (bits per second, microseconds, bytes, addresses), so a
backend only executes it and the content hash identifies the network exactly.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Loss(_Frozen):
    """Packet loss of one link direction, applied per wire packet.

    bernoulli: each packet is lost with probability `p`.
    gilbert_elliott: two-state Markov chain (netem's gemodel): `p` = P(good→bad),
    `r` = P(bad→good), `loss_good` / `loss_bad` = loss probability in each state.
    """

    model: Literal["none", "bernoulli", "gilbert_elliott"] = "none"
    p: float = 0.0
    r: float = 1.0
    loss_good: float = 0.0
    loss_bad: float = 1.0

    def mean_rate(self) -> float:
        if self.model == "none":
            return 0.0
        if self.model == "bernoulli":
            return self.p
        bad_share = self.p / (self.p + self.r) if self.p + self.r > 0 else 0.0
        return bad_share * self.loss_bad + (1 - bad_share) * self.loss_good


class Direction(_Frozen):
    """One direction of a link: what a packet from end `a` to end `b` (or back) sees."""

    rate_bps: int | None = None  # None: unlimited (no serialisation delay)
    delay_us: int = 0  # one-way propagation delay added by the emulator
    loss: Loss = Loss()
    queue_bytes: int | None = None  # drop-tail limit in bytes (None: see queue_packets)
    queue_packets: int | None = None  # drop-tail limit in packets (None with bytes None: unlimited)


class Node(_Frozen):
    name: str
    role: Literal["host", "router"]
    side: Literal["left", "right", "core"]


class Endpoint(_Frozen):
    """One end of a link: the node, its interface name and addresses (CIDR strings)."""

    node: str
    ifname: str
    ipv4: str | None = None  # e.g. "198.18.1.1/24"
    ipv6: str | None = None  # e.g. "2001:2:0:1::1/64"


class Link(_Frozen):
    """A point-to-point link. Emulated links run through the user-space link emulator
    (delay, loss, queue, rate per direction); plain links are veth pairs whose egress
    is rate-shaped in the kernel (tbf) when `forward.rate_bps`/`reverse.rate_bps` is set.
    """

    name: str
    kind: Literal["access", "bottleneck", "core"]
    emulated: bool
    a: Endpoint
    b: Endpoint
    forward: Direction  # a → b
    reverse: Direction  # b → a
    mtu: int = 1500


class PairDelay(_Frozen):
    """Extra round-trip time between two hosts, added by every emulated link on their path
    (half in each direction), so flows sharing a bottleneck can have different RTTs."""

    src: str
    dst: str
    extra_rtt_us: int


class Topology(_Frozen):
    name: str
    kind: Literal["dumbbell", "chain", "star"]
    families: tuple[Literal["ipv4", "ipv6"], ...] = ("ipv4", "ipv6")
    mtu: int = 1500
    # every TCP segment travels and is acknowledged on its own: hosts send without
    # segmentation offload and their routes carry the quickack metric
    ack_every_segment: bool = False
    # receivers' windows open from the first ACK: hosts start with socket buffers of the
    # BDP size and their routes carry the initrwnd metric
    open_receive_window: bool = False
    nodes: tuple[Node, ...]
    links: tuple[Link, ...]
    pair_delays: tuple[PairDelay, ...] = ()
    source: str | None = Field(default=None, exclude=True)  # file it came from (not hashed)

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def address(self, node: str) -> str:
        """The node's first address (IPv4 when it has one), without prefix length."""
        for link in self.links:
            for ep in (link.a, link.b):
                if ep.node == node and (address := ep.ipv4 or ep.ipv6):
                    return address.split("/")[0]
        raise KeyError(f"{node} has no address")

    def hosts(self) -> list[Node]:
        return [n for n in self.nodes if n.role == "host"]

    def canonical_json(self) -> str:
        d = self.model_dump(mode="json")
        for option in ("ack_every_segment", "open_receive_window"):
            if not d[option]:
                del d[option]  # testbeds from before the option hash as they did
        return json.dumps(d, sort_keys=True, separators=(",", ":"))

    def content_hash(self) -> str:
        """sha256 of the resolved form: two descriptions that build the same network hash alike."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()
