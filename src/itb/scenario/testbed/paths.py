"""Paths through a resolved topology: the links a packet crosses from one node to
another (shortest path), the direction it crosses each in, and the slowest rate on the
way (what a transfer between two hosts can reach at most)."""

from __future__ import annotations

from collections import deque

from itb.scenario.testbed.model import Direction, Endpoint, Link, Topology


def neighbours(topo: Topology) -> dict[str, list[tuple[str, Link, Endpoint, Endpoint]]]:
    """node → [(peer node, link, own endpoint, peer endpoint)]"""
    adj: dict[str, list] = {n.name: [] for n in topo.nodes}
    for link in topo.links:
        adj[link.a.node].append((link.b.node, link, link.a, link.b))
        adj[link.b.node].append((link.a.node, link, link.b, link.a))
    return adj


def path_hops(topo: Topology, src: str, dst: str) -> list[tuple[Link, Direction]]:
    """(link, the direction src → dst crosses it in) along the shortest path; [] when
    dst cannot be reached or is src."""
    adj = neighbours(topo)
    prev: dict[str, tuple[str, Link]] = {}
    seen = {src}
    queue = deque([src])
    while queue:
        node = queue.popleft()
        if node == dst:
            break
        for peer, link, _own, _other in adj[node]:
            if peer not in seen:
                seen.add(peer)
                prev[peer] = (node, link)
                queue.append(peer)
    if dst not in seen:
        return []
    out: list[tuple[Link, Direction]] = []
    node = dst
    while node != src:
        node, link = prev[node]
        out.append((link, link.forward if link.a.node == node else link.reverse))
    return list(reversed(out))


def path_links(topo: Topology, src: str, dst: str) -> list[Link]:
    """Links crossed from src to dst (shortest path)."""
    return [link for link, _d in path_hops(topo, src, dst)]


def path_rate_bps(topo: Topology, src: str, dst: str) -> int | None:
    """The slowest rate from src to dst on the wire (None: no rate-limited hop)."""
    rates = [d.rate_bps for _link, d in path_hops(topo, src, dst) if d.rate_bps]
    return min(rates) if rates else None
