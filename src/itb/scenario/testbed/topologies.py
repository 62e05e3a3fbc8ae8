"""Compile a validated testbed file (schema.TestbedFile) into the resolved Topology.

Rules the backend relies on (docs/scenario.md has the full list):
- nodes: routers first (in path order), then hosts (in file order);
- links: emulated links first (path order), then one access link per host (node order);
- link i gets 198.18.i.0/24 (then 198.19.(i-256).0/24) and 2001:2:0:<i hex>::/64,
  end a gets .1 / ::1, end b .2 / ::2;
- forward (a → b) on an emulated link is the left-to-right direction;
- access links: a = host "eth0", b = router "h-<host>"; router to router: "to-<peer>".
"""

from __future__ import annotations

import ipaddress
import math
import random
from collections.abc import Callable

from itb.errors import ScenarioError
from itb.scenario.testbed.model import Direction, Endpoint, Link, Loss, Node, PairDelay, Topology
from itb.scenario.testbed.schema import (
    MAX_ONE_WAY_US,
    MAX_RTT_US,
    DumbbellSection,
    LinkSpec,
    PairRttSpec,
    TestbedFile,
)
from itb.scenario.units import UnitError, format_duration

DEFAULT_RTT_US = 20_000
MAX_LINKS = 512  # 198.18.0.0/15 holds 512 /24s


class _Builder:
    """Collects nodes and links, checks names, hands out addresses in link order."""

    def __init__(self, spec: TestbedFile, source: str | None):
        self.source = source
        self.families = spec.testbed.families
        self.mtu = spec.testbed.mtu
        self.nodes: list[Node] = []
        self.links: list[Link] = []
        self._where: dict[str, str] = {}  # node name → field that named it

    def error(self, field: str, reason: str) -> ScenarioError:
        return ScenarioError(self.source, field, reason)

    def node(self, name: str, role: str, side: str, field: str) -> None:
        if name in self._where:
            raise self.error(
                field, f"duplicate node name {name!r} (already used by {self._where[name]})"
            )
        self._where[name] = field
        self.nodes.append(Node(name=name, role=role, side=side))

    def _endpoint(self, node: str, ifname: str, end: int) -> Endpoint:
        i = len(self.links)
        net4 = f"198.18.{i}" if i < 256 else f"198.19.{i - 256}"
        # compressed, as `ip -6 addr` prints it: link 0 is 2001:2::1/64
        ipv6 = ipaddress.IPv6Interface(f"2001:2:0:{i:x}::{end}/64").compressed
        return Endpoint(
            node=node,
            ifname=ifname,
            ipv4=f"{net4}.{end}/24" if "ipv4" in self.families else None,
            ipv6=ipv6 if "ipv6" in self.families else None,
        )

    def link(
        self, kind: str, a: str, a_if: str, b: str, b_if: str, fwd: Direction, rev: Direction
    ) -> None:
        if len(self.links) >= MAX_LINKS:
            raise self.error(
                "testbed.topology",
                f"more than {MAX_LINKS} links; the address plan holds {MAX_LINKS}",
            )
        self.links.append(
            Link(
                name=f"{a}-{b}",
                kind=kind,
                emulated=kind != "access",
                a=self._endpoint(a, a_if, 1),
                b=self._endpoint(b, b_if, 2),
                forward=fwd,
                reverse=rev,
                mtu=self.mtu,
            )
        )

    def emulated(self, kind: str, left: str, right: str, fwd: Direction, rev: Direction) -> None:
        self.link(kind, left, f"to-{right}", right, f"to-{left}", fwd, rev)

    def access(self, host: str, router: str, rate_bps: int | None) -> None:
        d = Direction(rate_bps=rate_bps)
        self.link("access", host, "eth0", router, f"h-{host}", d, d)


DEFAULT_QUEUE_FLOOR_FRAMES = 64
ETHERNET_HEADER = 14


def resolve_link(
    spec: LinkSpec, path: str, mtu: int, source: str | None
) -> tuple[Direction, Direction, int]:
    """(forward, reverse, base RTT in µs) of one emulated link."""
    err = lambda field, reason: ScenarioError(source, f"{path}.{field}", reason)  # noqa: E731
    delays = (spec.delay_forward, spec.delay_reverse)
    if spec.rtt is not None and delays != (None, None):
        raise err("rtt", "give either rtt or delay_forward and delay_reverse, not both")
    if spec.rtt is None and None in delays and delays != (None, None):
        missing = "delay_reverse" if spec.delay_reverse is None else "delay_forward"
        raise err(missing, "delay_forward and delay_reverse go together; give both (or rtt)")
    if spec.delay_forward is not None and spec.delay_reverse is not None:
        d_fwd, d_rev = spec.delay_forward, spec.delay_reverse
    else:  # neither is given (checked above)
        rtt = DEFAULT_RTT_US if spec.rtt is None else spec.rtt
        d_fwd = rtt // 2
        d_rev = rtt - d_fwd
        if d_rev > MAX_ONE_WAY_US:
            raise err(
                "rtt",
                f"rtt {format_duration(rtt)} means {format_duration(d_rev)} one way; at most 1 s",
            )
    rtt = d_fwd + d_rev  # the BDP of both directions uses the link's full base RTT
    # unset *_reverse fields follow the forward ones (rate_reverse = None means unlimited)
    rate_rev = spec.rate_reverse if "rate_reverse" in spec.model_fields_set else spec.rate
    loss_rev = spec.loss if spec.loss_reverse is None else spec.loss_reverse
    buffer_rev = "buffer" if spec.buffer_reverse is None else "buffer_reverse"

    def direction(rate: int | None, delay: int, loss: Loss, buffer_field: str) -> Direction:
        buffer = getattr(spec, buffer_field)
        if buffer_field not in spec.model_fields_set and rate is not None:
            # The default (one BDP) never goes below a small floor, so short or zero RTTs
            # work without a buffer setting; an explicit buffer is taken as given.
            floor = DEFAULT_QUEUE_FLOOR_FRAMES * (mtu + ETHERNET_HEADER)
            q_bytes = max(floor, rate * rtt // 8_000_000)
            return Direction(rate_bps=rate, delay_us=delay, loss=loss, queue_bytes=q_bytes)
        try:
            q_bytes, q_packets = buffer.resolve(rate, rtt, mtu)
        except UnitError as e:
            raise err(buffer_field, str(e)) from None
        return Direction(
            rate_bps=rate, delay_us=delay, loss=loss, queue_bytes=q_bytes, queue_packets=q_packets
        )

    fwd = direction(spec.rate, d_fwd, spec.loss, "buffer")
    rev = direction(rate_rev, d_rev, loss_rev, buffer_rev)
    return fwd, rev, rtt


# Default access rate: unlimited (hosts on fast NICs), so the emulated network is what
# binds; a token bucket at exactly the bottleneck rate would bind first and hide the
# bottleneck queue.
DEFAULT_ACCESS_RATE: int | None = None


def _access_rate(default: int | None, *sections) -> int | None:
    """The first section that sets access_rate wins (host, then its group, then global)."""
    for s in sections:
        if s is not None and "access_rate" in s.model_fields_set:
            return s.access_rate
    return default


def _only(spec: TestbedFile, kind: str, b: _Builder) -> None:
    """Refuse sections that belong to another topology: they would be silently ignored."""
    owner = {
        "dumbbell": "dumbbell",
        "bottleneck": "dumbbell",
        "pair_rtt": "dumbbell",
        "chain": "chain",
        "star": "star",
    }
    for section, topo in owner.items():
        if topo != kind and getattr(spec, section) is not None:
            raise b.error(
                section,
                f"section [{section}] applies to topology = {topo!r}, this testbed is {kind!r}",
            )


# --- dumbbell ------------------------------------------------------------------------


def _dumbbell(spec: TestbedFile, b: _Builder) -> list[PairDelay]:
    d = spec.dumbbell or DumbbellSection()
    fwd, rev, base_rtt = resolve_link(spec.bottleneck or LinkSpec(), "bottleneck", b.mtu, b.source)
    access = _access_rate(DEFAULT_ACCESS_RATE, d)
    b.node("rl", "router", "left", "the left router")
    b.node("rr", "router", "right", "the right router")
    left = [f"l{k}" for k in range(1, d.pairs + 1)]
    right = [f"r{k}" for k in range(1, d.pairs + 1)]
    for h in left:
        b.node(h, "host", "left", "dumbbell.pairs")
    for h in right:
        b.node(h, "host", "right", "dumbbell.pairs")
    b.emulated("bottleneck", "rl", "rr", fwd, rev)
    for h in left:
        b.access(h, "rl", access)
    for h in right:
        b.access(h, "rr", access)
    if spec.pair_rtt is None:
        return []
    totals = sample_pair_rtts(spec.pair_rtt, d.pairs, b.source)
    return [
        PairDelay(src=src, dst=dst, extra_rtt_us=max(0, total - base_rtt))
        for src, dst, total in zip(left, right, totals, strict=True)
    ]


def sample_pair_rtts(spec: PairRttSpec, pairs: int, source: str | None) -> list[int]:
    """Total RTT in µs per host pair, deterministic for a given seed (capped at 10 s)."""
    err = lambda field, reason: ScenarioError(source, f"pair_rtt.{field}", reason)  # noqa: E731
    needs = {
        "fixed": {"values"},
        "multimodal": {"modes"},
        "exponential": {"mean"},
        "poisson": {"mean"},
    }
    optional = {"multimodal": {"weights"}}
    dist = spec.distribution
    for field in ("values", "modes", "weights", "mean"):
        given = getattr(spec, field) is not None
        if field in needs[dist] and not given:
            raise err(field, f"distribution {dist!r} needs {field}")
        if given and field not in needs[dist] | optional.get(dist, set()):
            raise err(field, f"{field} does not apply to distribution {dist!r}")
    rng = random.Random(spec.seed)
    if dist == "fixed":
        assert spec.values is not None  # checked above: the distribution needs it
        if len(spec.values) != pairs:
            raise err(
                "values", f"{len(spec.values)} values for {pairs} pairs; give one RTT per pair"
            )
        totals = list(spec.values)
    elif dist == "multimodal":
        totals = _stratified(spec, pairs, rng, err)
    else:
        mean_us = spec.mean
        assert mean_us is not None  # checked above: the distribution needs it
        if mean_us <= 0:
            raise err("mean", "the mean RTT must be positive")
        if dist == "exponential":
            totals = [round(-mean_us * math.log(1.0 - rng.random())) for _ in range(pairs)]
        else:  # poisson: the RTT in whole milliseconds is Poisson(mean in ms)
            totals = [_poisson(rng, mean_us / 1000) * 1000 for _ in range(pairs)]
    return [min(t, MAX_RTT_US) for t in totals]


def _stratified(
    spec: PairRttSpec, pairs: int, rng: random.Random, err: Callable[[str, str], ScenarioError]
) -> list[int]:
    """Modes in proportion to their weights (largest remainder), shuffled by the seed:
    a few pairs still get a real mix, which independent draws would often miss."""
    modes = spec.modes
    if not modes:
        raise err("modes", "give at least one mode")
    weights = spec.weights if spec.weights is not None else [1.0] * len(modes)
    if len(weights) != len(modes):
        raise err("weights", f"{len(weights)} weights for {len(modes)} modes; give one per mode")
    if any(not math.isfinite(w) or w < 0 for w in weights) or sum(weights) <= 0:
        raise err("weights", "weights must be non-negative numbers, not all zero")
    quotas = [w / sum(weights) * pairs for w in weights]
    counts = [math.floor(q) for q in quotas]
    by_remainder = sorted(range(len(modes)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in by_remainder[: pairs - sum(counts)]:
        counts[i] += 1
    totals = [m for m, c in zip(modes, counts, strict=True) for _ in range(c)]
    rng.shuffle(totals)
    return totals


def _poisson(rng: random.Random, lam: float) -> int:
    """Knuth's method in chunks of λ ≤ 500 (sums of Poissons are Poisson; exp(-λ) stays representable)."""
    n = 0
    while lam > 0:
        step = min(lam, 500.0)
        lam -= step
        limit, prod = math.exp(-step), rng.random()
        while prod > limit:
            n += 1
            prod *= rng.random()
    return n


# --- chain (parking lot) -------------------------------------------------------------


def _chain(spec: TestbedFile, b: _Builder) -> None:
    c = spec.chain
    if c is None:
        raise b.error(
            "chain", "topology 'chain' needs a [chain] section with [[chain.host]] entries"
        )
    n = c.routers if c.routers is not None else (len(c.link) + 1 if c.link else 3)
    if c.link and len(c.link) != n - 1:
        raise b.error(
            "chain.link",
            f"{len(c.link)} links for {n} routers; give {n - 1} (or none for defaults)",
        )
    specs = c.link or [LinkSpec()] * (n - 1)
    hops = [resolve_link(s, f"chain.link[{i}]", b.mtu, b.source) for i, s in enumerate(specs)]
    access = DEFAULT_ACCESS_RATE
    if len(c.host) < 2:
        raise b.error("chain.host", "a chain needs at least two [[chain.host]] entries")
    routers = [f"c{i}" for i in range(n)]
    side = lambda i: "left" if i == 0 else "right" if i == n - 1 else "core"  # noqa: E731
    for i, r in enumerate(routers):
        b.node(r, "router", side(i), f"chain router {i}")
    for k, h in enumerate(c.host):
        if h.router >= n:
            raise b.error(
                f"chain.host[{k}].router",
                f"router {h.router} does not exist; routers are 0 to {n - 1}",
            )
        b.node(h.name, "host", side(h.router), f"chain.host[{k}].name")
    for i, (fwd, rev, _) in enumerate(hops):
        b.emulated("core", routers[i], routers[i + 1], fwd, rev)
    for h in c.host:
        b.access(h.name, routers[h.router], _access_rate(access, h, c))


# --- star ----------------------------------------------------------------------------


def _star(spec: TestbedFile, b: _Builder) -> None:
    s = spec.star
    if s is None or len(s.spoke) < 2:
        raise b.error("star.spoke", "a star needs at least two [[star.spoke]] entries")
    spokes = [resolve_link(sp, f"star.spoke[{i}]", b.mtu, b.source) for i, sp in enumerate(s.spoke)]
    access = DEFAULT_ACCESS_RATE
    leaves = [sp.name or f"s{i + 1}" for i, sp in enumerate(s.spoke)]
    sides = [sp.side or ("left" if i == 0 else "right") for i, sp in enumerate(s.spoke)]
    b.node("hub", "router", "core", "the hub router")
    for i, leaf in enumerate(leaves):
        b.node(leaf, "router", sides[i], f"star.spoke[{i}].name")
    for i, sp in enumerate(s.spoke):
        if not sp.hosts:
            raise b.error(f"star.spoke[{i}].hosts", "a spoke needs at least one host")
        for k, h in enumerate(sp.hosts):
            b.node(h, "host", sides[i], f"star.spoke[{i}].hosts[{k}]")
    for leaf, side, (fwd, rev, _) in zip(leaves, sides, spokes, strict=True):
        # forward runs left to right: out of a left leaf into the hub, out of the hub to a right leaf
        a, z = (leaf, "hub") if side == "left" else ("hub", leaf)
        b.emulated("core", a, z, fwd, rev)
    for leaf, sp in zip(leaves, s.spoke, strict=True):
        for h in sp.hosts:
            b.access(h, leaf, _access_rate(access, sp, s))


# --- entry point ---------------------------------------------------------------------


def compile_testbed(spec: TestbedFile, source: str | None = None) -> Topology:
    kind = spec.testbed.topology
    b = _Builder(spec, source)
    _only(spec, kind, b)
    pair_delays: list[PairDelay] = []
    if kind == "dumbbell":
        pair_delays = _dumbbell(spec, b)
    elif kind == "chain":
        _chain(spec, b)
    else:
        _star(spec, b)
    return Topology(
        name=spec.testbed.name,
        kind=kind,
        families=spec.testbed.families,
        mtu=b.mtu,
        ack_every_segment=spec.testbed.ack_every_segment,
        open_receive_window=spec.testbed.open_receive_window,
        nodes=tuple(b.nodes),
        links=tuple(b.links),
        pair_delays=tuple(pair_delays),
        source=source,
    )
