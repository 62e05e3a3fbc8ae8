"""A repetition as itb-sim's configuration (native/sim/itb_sim.cc reads it): the topology's
nodes and links with each direction's rate, delay, queue and loss, the transfers with
their ports, volumes, congestion controls, caps and profiles, the ping-pongs with their
message, answer and count, and the link changes. One record per line, fields separated
by spaces, "-" for none.

What a simulation cannot run is refused before anything runs (`unsupported`), with the
reason: commands (a program on a host; only `sleep SECONDS`, which only waits, is kept
as a timer), UDT, per-pair extra RTTs,
links whose two directions have different delays, loss changes in `[[set]]`, IPv6-only
testbeds, a congestion control that has no code here (Linux's without its code in the
simulator, an `ns3:<model>` that ns-3's registry has not), and a scenario whose
simulation would need more memory than the machine has (itb.backends.sim.memory).
"""

from __future__ import annotations

import json
import math

from itb.backends.sim import memory, ns3types
from itb.emulation.linkem import direction_json
from itb.emulation.plan import RMEM_DEFAULT, socket_buffer_max, tbf_params
from itb.scenario.experiment.events import Command, Pingpong, SetLink, Transfer, Udp
from itb.scenario.testbed.model import Direction, Link, Topology

# the algorithms whose Linux code runs in the simulator (itb.cc.simlinux); ns-3's own
# models run as "ns3:<model>" (ns3:TcpCubic, ns3:TcpBbr, …)
LINUX = ("reno", "cubic", "bic", "highspeed", "htcp", "scalable", "vegas")
# a timer never lasts past this (ns-3 counts time in int64 ns): a longer sleep ends the
# same way, with the timeline (experiment.duration, 24 h at most)
TIMER_MAX_US = 2**62 // 1000
BASE_PORT = 20000
# a UDP receiver listens until this long after its sender's end, as the engine's
# (itb.engine.processes.UDP_DRAIN_S; tests/unit/test_sim_config.py holds them equal)
UDP_DRAIN_US = 1_000_000


def unsupported(topo: Topology, events: list) -> str | None:
    """Why this timeline cannot be simulated, or None."""
    if topo.pair_delays:
        return "per-pair extra RTTs (pair_delays) are not simulated yet"
    for link in topo.links:
        if link.forward.delay_us != link.reverse.delay_us:
            return (
                f"link {link.name}: its two directions have different delays "
                f"({link.forward.delay_us} and {link.reverse.delay_us} µs); ns-3's "
                "point-to-point channel has one"
            )
        if link.a.ipv4 is None or link.b.ipv4 is None:
            return f"link {link.name}: simulation needs IPv4 addresses"
    for e in events:
        if isinstance(e, Command) and sleep_us(e) is None:
            return (
                f"{e.id}: a command runs a program on a host, which a simulator has not "
                "(only `sleep SECONDS`, a timer, is simulated)"
            )
        if isinstance(e, Transfer) and e.protocol == "udt":
            return f"{e.id}: UDT is not simulated"
        if isinstance(e, Transfer) and (e.source_file or e.sink_file):
            return f"{e.id}: files are not simulated (the transfer moves counted bytes)"
        if isinstance(e, SetLink) and e.loss is not None:
            return f"{e.id}: loss changes are not simulated yet"
        if isinstance(e, SetLink) and e.delay_us is not None and e.direction != "both":
            return f"{e.id}: a delay change is simulated on both directions only"
    for e in events:
        cc = getattr(e, "cc", None)
        why = cc_unsupported(cc) if isinstance(cc, str) else None
        if why:
            return f"{e.id}: {why}"
    return memory.refusal(topo, events)


def cc_unsupported(name: str) -> str | None:
    """Why this congestion control cannot run in the simulator, or None: Linux's whose
    code is built in, and ns-3's models its TypeId registry has (itb.backends.sim.ns3types)."""
    if name in LINUX:
        return None
    if name.startswith("ns3:"):
        known = ns3types.congestion_controls()
        if name in known:
            return None
        return (
            f"congestion control {name!r}: ns-3 has no such model (its models: "
            f"{', '.join(sorted(known))})"
        )
    return (
        f"congestion control {name!r}: its Linux code does not run in the simulator "
        f"(Linux's: {', '.join(LINUX)}); ns-3's models run as ns3:<model>, e.g. ns3:TcpBbr"
    )


def _dir(d: Direction, mtu: int, emulated: bool) -> dict:
    """A direction as linkem reads it (native/linkem/direction-format.json); a link the
    testbed shapes with a token bucket (not emulated) has that bucket's queue."""
    if not emulated and d.rate_bps and d.queue_bytes is None and d.queue_packets is None:
        d = d.model_copy(update={"queue_bytes": tbf_params(d.rate_bps, mtu)[1]})
    return direction_json(d)


def link_record(lk: Link) -> str:
    """A link of itb-sim's configuration: `link` and one JSON object (its ends, MTU, and
    each direction in the schema linkem reads)."""
    doc = {
        "name": lk.name, "emulated": lk.emulated, "a": lk.a.node, "a_addr": lk.a.ipv4,
        "b": lk.b.node, "b_addr": lk.b.ipv4, "mtu": lk.mtu,
        "ab": _dir(lk.forward, lk.mtu, lk.emulated), "ba": _dir(lk.reverse, lk.mtu, lk.emulated),
    }  # fmt: skip
    return "link " + json.dumps(doc, separators=(",", ":"))


def sleep_us(c: Command) -> int | None:
    """A command that only waits (`sleep SECONDS`, plain): its length, which a simulation
    keeps as a timer; None for any other."""
    if len(c.argv) != 2 or c.argv[0] != "sleep" or c.paced:
        return None
    try:
        seconds = float(c.argv[1])
    except ValueError:
        return None
    if math.isnan(seconds) or seconds < 0:
        return None
    # (sleep's "inf" and 1e30 wait as long as the timeline: capped, the same run)
    return int(min(seconds * 1e6, TIMER_MAX_US))


def config(
    topo: Topology,
    events: list,
    base_ns: int,
    duration_us: int,
    interval_us: int,
    seed: int,
    repetition: int,
    emulator_interval_us: int = 1000,
) -> str:
    lines = [
        f"run {base_ns} {duration_us} {interval_us} {emulator_interval_us} {seed} {repetition}"
    ]
    lines += [f"node {n.name}" for n in topo.nodes]
    lines += [link_record(lk) for lk in topo.links]
    buffer = socket_buffer_max(topo)
    # receivers as the testbed's: Linux's window from tcp_rmem[1], autotuned up to the
    # buffer (native/sim/rcv_window.h); with open_receive_window, the whole buffer at once
    if not topo.open_receive_window:
        lines.append(f"rcvwin linux {RMEM_DEFAULT} {buffer}")
    # the testbed's hosts then send one segment per packet (no TSO/GSO), as itb-sim's
    # always do, and their routes' quickack acknowledges each one
    if topo.ack_every_segment:
        lines.append("delack 1")
    port = BASE_PORT
    for e in events:
        if isinstance(e, Transfer):
            port += 1
            prof = (
                ",".join(f"{t}:{r}" for t, r in e.profile) if e.profile else "-"
            )  # fmt: skip
            lines.append(
                f"tcp {e.id} {e.src} {e.dst} {topo.address(e.dst)} {port} {e.at_us} "
                f"{e.volume} {e.streams} {e.cc} {e.rate_bps or '-'} {prof} {e.enforce} "
                f"{e.pace_headroom} {e.socket_buffer_bytes or buffer} {int(e.wait)}"
            )
        elif isinstance(e, Pingpong):  # every message answered before the next is written
            port += 1
            lines.append(
                f"pingpong {e.id} {e.src} {e.dst} {topo.address(e.dst)} {port} {e.at_us} "
                f"{e.size} {e.reply_size or e.size} {e.count} {e.cc} {e.rate_bps or '-'} "
                f"{buffer} 1"
            )
        elif isinstance(e, Udp):  # flow udp-send / udp-recv (native/sim/udp.h)
            port += 1
            lines.append(
                f"udp {e.id} {e.src} {e.dst} {topo.address(e.dst)} {port} {e.at_us} "
                f"{e.rate_bps} {e.duration_us} {e.size} {e.arrivals} {e.seed} {int(e.wait)} "
                f"{UDP_DRAIN_US}"
            )
        elif isinstance(e, Command):  # a timer (`unsupported` lets no other through)
            # past the timeline's end it never fires: kept just past it (no overflow)
            length = min(sleep_us(e) or 0, max(0, duration_us - e.at_us) + 1)
            lines.append(f"timer {e.id} {e.at_us} {length} {int(e.wait)}")
        elif isinstance(e, SetLink):
            d = {"forward": "ab", "reverse": "ba", "both": "both"}[e.direction]
            rate = "-" if not e.rate_given else (e.rate_bps or "inf")
            delay = "-" if e.delay_us is None else e.delay_us
            lines.append(f"set {e.id} {e.at_us} {e.link} {d} {rate} {delay}")
    return "\n".join(lines) + "\n"
