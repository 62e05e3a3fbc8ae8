"""`itb calibrate`: eWAN's micro-benchmarks on a freshly built testbed.

Measured vs configured: idle RTT, RTT under load, bottleneck rate (one bulk TCP flow and
a UDP constant-rate stream at 1.2 × the rate), loss; plus the host inventory and whether
the link emulator itself kept up.

Here the run (the testbed up, the tests in order, the testbed down) and the RTT, TCP and
socket-buffer checks; the UDP checks are `udp`'s, what the emulator's log and stats say
is `emulator`'s, and the result (`Calibration`, calibration.json) is `record`'s.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from itb import cc
from itb.backends import facts as inv
from itb.backends import owner
from itb.backends.registry import Backend, named
from itb.backends.testbed import Hosts
from itb.calibration import probes
from itb.calibration.emulator import fresh, judge_emulator, log_whole, whole
from itb.calibration.record import Calibration
from itb.calibration.udp import udp_loss, udp_mtu, udp_rate
from itb.calibration.verdict import Check, at_least, at_most, relative
from itb.emulation import monitor
from itb.errors import PreflightError
from itb.say import Say, quiet
from itb.scenario.testbed.model import Topology
from itb.scenario.testbed.pathspec import PathSpec, default_pair, path_spec

TCP_MIN_SHARE_PCT = 90.0
RATE_CEILING_PCT = 100.5
RTT_TOLERANCE_PCT = 1.0


@dataclass
class Options:
    tcp_seconds: float = 10.0
    udp_seconds: float = 5.0
    pings: int = 100
    loss_packets: int = 1_000_000
    # The reference is Linux's default CC, not the host's setting: BBR's PROBE_RTT empties
    # the pipe every 10 s (≈ 0.6 s at 200 ms RTT), which says nothing about the emulator.
    cc: str = "cubic"


def calibrate(
    topo: Topology,
    opts: Options = Options(),
    progress: Say = quiet,
    backend: Backend | None = None,
) -> Calibration:
    """On the local testbed, or the backend's testbed of hosts (an SSH testbed of the
    default pair's hosts, reserved if it must be): the congestion control is the
    kernel's, else ITB's eBPF one (its preflight). A backend whose testbed is not of
    hosts (a simulator: its links are its configuration) is refused."""
    backend = backend or named()
    pair = default_pair(topo)
    with owner.exclusive("itb calibrate"), backend.reserved(progress) as backend:
        tb = backend.open(topo, cc.support(), say=progress, only=set(pair))
        if not isinstance(tb, Hosts):
            raise PreflightError(
                f"--backend {backend.name}: its testbed runs no program on a host, there is "
                "no emulator to calibrate"
            )
        tb.select([opts.cc])
        try:
            return _calibrate(topo, tb, pair, opts, progress)
        finally:
            tb.release()


def _calibrate(
    topo: Topology, tb: Hosts, pair: tuple[str, str], opts: Options, progress
) -> Calibration:
    src_name, dst_name = pair
    spec = path_spec(topo, src_name, dst_name)
    cal = Calibration(
        testbed={"name": topo.name, "hash": topo.content_hash(), "source": topo.source},
        path={
            "src": src_name,
            "dst": dst_name,
            "rtt_ms": spec.rtt_us / 1000,
            "rate_bps": spec.rate_bps,
            "loss": spec.loss,
            "queue_delay_ms": None if spec.queue_delay_us is None else spec.queue_delay_us / 1000,
            "bdp_bytes": spec.bdp_bytes,
        },
    )
    kernel_cc = tb.cc_names().get(opts.cc, opts.cc)  # ITB's eBPF: itb_<name>
    where = tb.provenance().get("inventory")
    if where is not None:
        cal.testbed["inventory"] = where["source"]
        cal.testbed["placement"] = where["placement"]
    work = Path(tempfile.mkdtemp(prefix="itb-calibrate-"))  # the hosts' logs, if any
    try:
        try:
            tb.up(work)
            _measure(cal, tb, spec, opts, kernel_cc, progress)
        finally:
            progress("tearing the testbed down")
            stats = tb.down()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    judge_emulator(cal, spec, stats)
    if where is not None and where.get("emulator") is None:
        _measured_not_configured(cal)
    return cal


def _measured_not_configured(cal: Calibration) -> None:
    """An SSH testbed without an emulator host: the path is the real network (a switch
    port as bottleneck), so its RTT, rate and loss are what the calibration finds, not
    the scenario's: every figure is reported, none is judged against the scenario."""
    cal.testbed["bottleneck"] = "real network (no emulator host): measured, not configured"
    for c in cal.checks:
        if c.quantity.startswith("socket buffer"):
            continue  # the hosts' own setting: still judged
        c.detail = "; ".join(
            p
            for p in (
                c.detail,
                f"the scenario says {c.configured} {c.unit}" if c.configured is not None else "",
            )
            if p
        )
        c.configured, c.ok, c.tolerance_pct, c.error_pct, c.cause = None, None, None, None, None


def _measure(
    cal: Calibration, tb: Hosts, spec: PathSpec, opts: Options, kernel_cc: str, progress
) -> None:
    topo = tb.topology  # on an SSH testbed: the hosts' real addresses
    src, dst = tb.host(spec.src), tb.host(spec.dst)
    addr = topo.address(spec.dst)
    em = tb.emulators.get(spec.bottleneck.name) if spec.bottleneck else None
    direction = spec.direction
    src_if, dst_if = tb.ifname(spec.src), tb.ifname(spec.dst)
    cal.inventory = inv.inventory(src, [dst], src_if, tb.same_machine)
    _check_buffers(cal, spec)
    off = em.clock_offset_ns if em else 0  # the emulator dates its rows on its own clock

    began = time.monotonic_ns()
    progress("idle RTT")
    probes.ping(src, addr, 3, 0.2)  # neighbour resolution through the emulator
    idle = probes.ping(src, addr, opts.pings, 0.02)
    idle_ms = probes.median(idle)
    cal.checks.append(
        relative(
            f"idle RTT (median of {len(idle)} pings)",
            spec.rtt_us / 1000,
            idle_ms,
            "ms",
            RTT_TOLERANCE_PCT,
            f"min {min(idle):.3f} max {max(idle):.3f}",
        )
    )

    iperf = probes.Iperf(src, dst, addr)
    omit = max(2, int(spec.rtt_us * 30 / 1e6) + 1)  # slow start and buffer autotuning ramp
    progress(f"one bulk TCP flow ({opts.cc}) for {opts.tcp_seconds:g} s (+{omit} s ramp)")
    bg = probes.BackgroundPing(src, addr)
    cpu0, t0 = (em.cpu_seconds() if em else 0.0), time.monotonic_ns()
    tcp = iperf.run(["-C", kernel_cc], opts.tcp_seconds, omit)
    t1, cpu1 = time.monotonic_ns(), (em.cpu_seconds() if em else 0.0)
    loaded = bg.stop()
    goodput = tcp["end"]["sum_received"]["bits_per_second"]
    retrans = tcp["end"]["sum_sent"].get("retransmits")
    if em:
        cal.emulator["cpu_pct_during_tcp"] = 100.0 * (cpu1 - cpu0) / ((t1 - t0) / 1e9)
    cal.checks.append(_goodput_check(spec, opts, goodput, retrans, idle_ms, topo.mtu))
    if em and spec.rate_bps:
        fresh(em, t1)
        t0, t1 = t0 + off, t1 + off
        lo = t0 + int(omit * 1e9)
        rows = monitor.between(monitor.direction_log(em.log_dir, direction, t0, t1), lo, t1)
        peak = max(monitor.windowed_rates_bps(rows, 100_000_000), default=0.0)
        cal.checks.append(
            whole(
                at_most(
                    "peak wire rate (100 ms windows)",
                    spec.rate_bps * RATE_CEILING_PCT / 100 / 1e6,
                    peak / 1e6,
                    "Mbit/s",
                    f"{RATE_CEILING_PCT} % of the configured rate",
                ),
                em,
                direction,
                rows,
                lo,
                t1,
            )
        )
    if loaded:
        _queue_check(cal, spec, loaded, idle_ms)

    if spec.rate_bps:
        udp_rate(cal, tb, src, dst, addr, em, direction, spec, opts, progress)
        if tb.same_machine:
            udp_mtu(cal, topo, src, dst, addr, dst_if, em, spec, opts, progress)
        else:
            cal.warnings.append(
                "the MTU-size UDP test (the receiver's interface counters, "
                "the emulator's threads) runs on the local testbed only"
            )
    if spec.loss > 0:
        udp_loss(cal, iperf, spec, opts, progress)
    if em:
        fresh(em, time.monotonic_ns())
        log_whole(cal, em, began + off, off)


def _goodput_check(
    spec: PathSpec, opts: Options, goodput: float, retrans, idle_ms: float, mtu: int
) -> Check:
    """One bulk flow's goodput against the path's rate (none on an unlimited path; on a
    lossy one, Reno's response function for scale: the loss bounds it, not the link)."""
    if spec.loss > 0:
        mss = mtu - 52  # IPv4 + TCP with timestamps
        mathis = mss * 8 / (idle_ms / 1e3) * 1.22 / spec.loss**0.5
        return Check(
            "TCP goodput, 1 flow (loss-limited)",
            None,
            goodput / 1e6,
            "Mbit/s",
            None,
            f"{opts.cc}, {retrans} retransmissions; "
            f"Reno's response function at this loss: {mathis / 1e6:.1f}",
        )
    if spec.rate_bps:
        return at_least(
            "TCP goodput, 1 flow",
            spec.rate_bps / 1e6,
            goodput / 1e6,
            "Mbit/s",
            TCP_MIN_SHARE_PCT,
            f"{opts.cc}, {retrans} retransmissions",
        )
    return Check(
        "TCP goodput, 1 flow (unlimited path)",
        None,
        goodput / 1e6,
        "Mbit/s",
        None,
        f"{opts.cc}, {retrans} retransmissions",
    )


def _queue_check(cal: Calibration, spec: PathSpec, loaded: list[float], idle_ms: float) -> None:
    """The RTT under load: at most the full queues' delay and a frame's slack more."""
    extra = max(loaded) - idle_ms
    qd, path_qd = spec.queue_delay_us, spec.path_queue_delay_us
    if qd is not None and path_qd is not None:
        # One frame of serialisation and scheduling slack on top of full queues: the
        # bottleneck's, and on a path of several emulated links theirs too (a burst
        # from a fast access link queues at a slower link before the bottleneck)
        slack_ms = 0.5 + (1514 * 8e3 / spec.rate_bps if spec.rate_bps else 0)
        held = f"queue holds {qd / 1000:.2f} ms"
        if path_qd > qd:
            held = f"queues along the path hold {path_qd / 1000:.2f} ms (the bottleneck's {qd / 1000:.2f})"
        cal.checks.append(
            at_most(
                "extra RTT under load (max)",
                max(qd, path_qd) / 1000 + slack_ms,
                extra,
                "ms",
                f"{held}; median under load {probes.median(loaded):.2f} ms",
            )
        )


def _check_buffers(cal: Calibration, spec: PathSpec) -> None:
    bdp = spec.bdp_bytes
    rmem = inv.tcp_buffer_max(cal.inventory["sysctls"].get("net.ipv4.tcp_rmem"))
    wmem = inv.tcp_buffer_max(cal.inventory["sysctls"].get("net.ipv4.tcp_wmem"))
    if bdp and rmem and wmem:
        need = 2 * bdp
        cal.checks.append(
            Check(
                "socket buffer max vs BDP",
                need / 1e6,
                min(rmem, wmem) / 1e6,
                "MB",
                None,
                f"BDP {bdp / 1e6:.2f} MB; tcp_rmem/tcp_wmem max must be ≥ 2 × BDP",
                ok=min(rmem, wmem) >= need,
            )
        )
