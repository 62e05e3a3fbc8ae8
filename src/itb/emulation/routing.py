"""Static routes for a resolved topology: shortest paths over its links."""

from __future__ import annotations

import ipaddress
from collections import deque

from itb.scenario.testbed.model import Endpoint, Link, Topology
from itb.scenario.testbed.paths import neighbours


def first_hops(topo: Topology, src: str) -> dict[str, tuple[Link, Endpoint, Endpoint]]:
    """For every node reachable from src: the link and endpoints of the first hop."""
    adj = neighbours(topo)
    first: dict[str, tuple[Link, Endpoint, Endpoint]] = {}
    seen = {src}
    queue: deque[str] = deque()
    for peer, link, own, other in adj[src]:
        if peer not in seen:
            seen.add(peer)
            first[peer] = (link, own, other)
            queue.append(peer)
    while queue:
        node = queue.popleft()
        for peer, _link, _own, _other in adj[node]:
            if peer not in seen:
                seen.add(peer)
                first[peer] = first[node]
                queue.append(peer)
    return first


def routes_for(topo: Topology, node: str) -> list[tuple[str, str, int]]:
    """(destination CIDR or 'default', gateway, family) for one node.

    A node with a single link (a host) gets a default route per family; a router gets
    one route per subnet it is not attached to, via the next hop on the shortest path.
    """
    adj = neighbours(topo)
    mine = adj[node]
    routes: list[tuple[str, str, int]] = []
    if len(mine) == 1:
        _peer, _link, _own, other = mine[0]
        for fam, addr in ((4, other.ipv4), (6, other.ipv6)):
            if addr:
                routes.append(("default", str(ipaddress.ip_interface(addr).ip), fam))
        return routes
    attached = {id(link) for _p, link, _o, _t in mine}
    hops = first_hops(topo, node)
    for link in topo.links:
        if id(link) in attached:
            continue
        # Reach the link through whichever of its ends is closer.
        via = hops.get(link.a.node) or hops.get(link.b.node)
        if via is None:
            continue
        _first_link, _own, gw = via
        for fam, net_addr, gw_addr in ((4, link.a.ipv4, gw.ipv4), (6, link.a.ipv6, gw.ipv6)):
            if net_addr and gw_addr:
                net = ipaddress.ip_interface(net_addr).network
                routes.append((str(net), str(ipaddress.ip_interface(gw_addr).ip), fam))
    return routes
