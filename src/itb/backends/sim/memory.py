"""What a simulation would need of the machine's memory, estimated from the scenario
before anything runs, and the refusal of one that would need more than the machine has
(docs/simulation.md, "Refused before anything runs").

itb-sim holds every packet ns-3 has in flight — in a queue, on a link, in a sender's
list of segments not yet acknowledged, in a receiver's out-of-order data — at a few kB
each, and per connection its sockets, buffers and logs. The estimate, in bytes:

    BASE + PER_TRANSFER × transfers + PER_CONNECTION × connections + PER_PACKET × packets
    packets = min(windows, 2 × held)

`held`: what the links can hold, every direction's queue (in full frames) and its pipe
(rate × one-way delay); twice that, as a slow start overshoots up to about twice what
the path holds before its losses are seen. `windows`: what the flows can have sent and
not had acknowledged, each connection's volume up to its socket buffers (itb-sim's:
the largest of the transfers', at least 4 MiB), a ping-pong's message and answer, a UDP
stream's datagrams. The per-item costs were measured (itb-sim's peak resident memory,
`python3 bench/sim_memory.py`); so was the estimate against what ran.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from itb.emulation.plan import socket_buffer_max, tbf_params
from itb.scenario.experiment.events import Pingpong, TcpBackground, Transfer, Udp
from itb.scenario.testbed.model import Direction, Topology
from itb.scenario.testbed.paths import path_hops

MIB = 2**20
# The costs, from itb-sim's peak resident memory (bench/sim_memory.py): 19-21 MiB with a
# few nodes and flows (a margin above: the allocator's own); +26 KiB a transfer of one
# stream, +12 KiB each further stream (1 000 short transfers of 1 and of 8); 3.8-4.1 KiB
# a segment in flight without losses (one reno flow held by its 16 or 32 MiB buffers),
# up to 7.6 KiB a frame of twice what the path holds where a slow start overshoots (10
# cubic flows at 1 Gbit/s, 20 ms, one BDP: the sender's, the wire's and the receiver's
# out-of-order copies); a UDP datagram its payload and 0.7 KiB.
BASE = 32 * MIB
PER_TRANSFER = 16 * 1024  # a transfer's sender, receiver and logs
PER_CONNECTION = 12 * 1024  # each TCP connection's sockets (a transfer's streams)
PER_SEGMENT = 8 * 1024  # a segment's copies (sender, wire, receiver), its ACK, its events
PER_DATAGRAM = 768  # a UDP datagram beyond its payload (which ns-3 holds: flow's header)
UNLIMITED_BPS = 100_000_000_000  # itb-sim's rate of a direction without one
SIM_MIN_BUFFER = 4 * MIB  # itb-sim's smallest socket buffer


@dataclass
class Estimate:
    """The peak memory a simulation may need, in bytes, and its terms (what → bytes;
    `biggest` names the largest)."""

    total_bytes: int
    terms: dict[str, int] = field(default_factory=dict)
    biggest: str = ""

    def text(self) -> str:
        size = (
            f"{self.total_bytes / 2**30:.1f} GiB"
            if self.total_bytes >= 2**30
            else f"{self.total_bytes / MIB:.0f} MiB"
        )
        return f"about {size}, most of it {self.biggest}"


def _frame(mtu: int) -> int:
    return mtu + 14  # as itb-sim counts a queue in bytes: full frames


def _held(d: Direction, mtu: int, emulated: bool) -> tuple[int, int]:
    """(queue, pipe) of one direction, in full frames."""
    rate = d.rate_bps or UNLIMITED_BPS
    pipe = rate * d.delay_us // 8_000_000 // _frame(mtu)
    if d.queue_packets is not None:
        return d.queue_packets, pipe
    qb = d.queue_bytes
    if qb is None and d.rate_bps and not emulated:
        qb = tbf_params(d.rate_bps, mtu)[1]  # the token bucket's queue, as config writes it
    # (an unlimited direction's queue never builds up: 0)
    return (qb // _frame(mtu) if qb and d.rate_bps else 0), pipe


def _pairs(e) -> list[tuple[str, str]]:
    """The (source, destination) pairs an event's data goes between."""
    if isinstance(e, Pingpong):
        return [(e.src, e.dst), (e.dst, e.src)]
    if isinstance(e, TcpBackground):
        n = max(len(e.src), len(e.dst))
        return [(e.src[k % len(e.src)], e.dst[k % len(e.dst)]) for k in range(n)]
    return [(e.src, e.dst)]


def estimate(topo: Topology, events: list) -> Estimate:
    """The estimate for a timeline's events (a `[[tcp_background]]` counts the flows its
    mean gap gives, each of the mean size)."""
    mtu = topo.links[0].mtu if topo.links else 1500
    mss = mtu - 52
    flows = [e for e in events if isinstance(e, Transfer | Pingpong | Udp | TcpBackground)]
    # what the directions the data crosses can hold (queue and pipe); the others carry ACKs
    held_by: dict[str, int] = {}
    for src, dst in {p for e in flows for p in _pairs(e) if p[0] != p[1]}:
        for link, d in path_hops(topo, src, dst):
            name = "forward" if d is link.forward else "reverse"
            q, p = _held(d, link.mtu, link.emulated)
            held_by[f"link {link.name} {name}: queue {q} and pipe {p} frames"] = q + p
    held = sum(held_by.values())
    buffers = [e.socket_buffer_bytes for e in events if isinstance(e, Transfer)]
    buffer = max([SIM_MIN_BUFFER, socket_buffer_max(topo), *(b for b in buffers if b)])
    transfers = connections = windows = datagrams = datagram_bytes = 0

    def segments(volume: int) -> int:
        return -(-min(volume, buffer) // mss)

    for e in flows:
        transfers += 1
        if isinstance(e, Transfer):
            connections += e.streams
            windows += -(-min(e.volume, e.streams * buffer) // mss)
        elif isinstance(e, Pingpong):
            connections += 1
            windows += segments(e.size) + segments(e.reply_size or e.size)
        elif isinstance(e, Udp):
            n = e.rate_bps * e.duration_us // 8_000_000 // max(1, e.size)
            datagrams += n
            datagram_bytes = max(datagram_bytes, e.size + PER_DATAGRAM)
        else:  # TcpBackground: its flows
            n = -(-e.duration_us // max(1, e.mean_gap_us))
            transfers += n - 1
            connections += n
            windows += n * segments(e.mean_bytes)
    # a slow start overshoots up to about twice what the path holds before losses are seen
    tcp = min(windows, 2 * held)
    udp = min(datagrams, held)
    top = max(held_by, key=lambda k: held_by[k]) if held_by else "none"
    terms = {
        "itb-sim itself": BASE,
        f"the state of {transfers} transfers and {connections} connections": transfers
        * PER_TRANSFER
        + connections * PER_CONNECTION,
        (
            f"{tcp} TCP segments in flight, the flows' windows ({connections} connections, "
            f"socket buffers of {buffer / MIB:.0f} MiB, their volumes)"
            if tcp == windows
            else f"{tcp} TCP segments in flight, twice what the links hold ({held} frames; "
            f"the most on {top})"
        ): tcp * PER_SEGMENT,
        f"{udp} UDP datagrams in the links' queues and pipes": udp * datagram_bytes,
    }
    biggest = max(terms, key=lambda k: terms[k])
    return Estimate(sum(terms.values()), terms, biggest)


def available_bytes() -> int:
    """The memory this machine can give a new program now: the kernel's available memory,
    or what is left under this process's cgroup limit when that is less."""
    try:
        import psutil

        free = int(psutil.virtual_memory().available)
    except ImportError:  # (psutil comes with the simulation's extras: `distributed`)
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    room = _cgroup_room()
    return free if room is None else min(free, room)


def _cgroup_room() -> int | None:
    """limit - usage of the tightest memory limit on this process's cgroup (v2) and its
    parents; None without one."""
    try:
        line = Path("/proc/self/cgroup").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    rel = line.split("::", 1)[1] if "::" in line else None
    if rel is None:
        return None
    d, room = Path("/sys/fs/cgroup") / rel.lstrip("/"), None
    while True:
        try:
            limit = (d / "memory.max").read_text().strip()
            if limit != "max":
                left = int(limit) - int((d / "memory.current").read_text())
                room = left if room is None else min(room, left)
        except (OSError, ValueError):
            pass
        if d == Path("/sys/fs/cgroup") or d == d.parent:
            return room
        d = d.parent


def refusal(topo: Topology, events: list, available: int | None = None) -> str | None:
    """Why this simulation would not fit in the machine's memory, or None."""
    est = estimate(topo, events)
    room = available_bytes() if available is None else available
    if est.total_bytes <= room:
        return None
    return (
        f"its simulation would need {est.text()}, more than the "
        f"{room / 2**30:.1f} GiB this machine has available (a smaller queue, rate, RTT "
        "or fewer flows; docs/simulation.md)"
    )
