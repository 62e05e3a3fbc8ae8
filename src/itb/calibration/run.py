"""`itb calibrate`: eWAN's micro-benchmarks on a freshly built testbed.

Measured vs configured: idle RTT, RTT under load, bottleneck rate (one bulk TCP flow and
a UDP constant-rate stream at 1.2 × the rate), loss; plus the host inventory and whether
the link emulator itself kept up.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from itb import cc
from itb.backends import facts as inv
from itb.backends import open_testbed, owner
from itb.backends.hostside import udprate
from itb.backends.testbed import Emulator, Testbed
from itb.calibration import probes, udpmtu
from itb.calibration.record import CALIBRATION_FORMAT
from itb.calibration.verdict import Check, at_least, at_most, relative
from itb.emulation import monitor
from itb.say import Say, quiet
from itb.scenario.testbed.model import Topology
from itb.scenario.testbed.paths import path_links
from itb.scenario.testbed.pathspec import PathSpec, default_pair, path_spec

UDP_PORT = 5301
UDP_MTU_PORT = 5302
UDP_PAYLOAD = 1472  # one 1514-byte frame at MTU 1500 over IPv4
UDP_SOCKET_BUFFER_MAX = 16 * 1024 * 1024
LOSS_PAYLOAD = 64  # small datagrams: 10^6 of them in seconds
FRAME_OVERHEAD = 14 + 20 + 8  # Ethernet + IPv4 + UDP headers
MAX_LOSS_PPS = 40_000  # sender, emulator and receiver all keep up on 2 cores
TCP_MIN_SHARE_PCT = 90.0
RATE_CEILING_PCT = 100.5
RTT_TOLERANCE_PCT = 1.0
UDP_TOLERANCE_PCT = 1.0
LATE_SHARE_WARN = 0.001
LOG_CHECK = "link emulator's 1 ms log: no rows lost"
LOG_SETTLE_NS = 500_000_000


@dataclass
class Options:
    tcp_seconds: float = 10.0
    udp_seconds: float = 5.0
    pings: int = 100
    loss_packets: int = 1_000_000
    # The reference is Linux's default CC, not the host's setting: BBR's PROBE_RTT empties
    # the pipe every 10 s (≈ 0.6 s at 200 ms RTT), which says nothing about the emulator.
    cc: str = "cubic"


@dataclass
class Calibration:
    testbed: dict
    path: dict
    checks: list[Check] = field(default_factory=list)
    inventory: dict = field(default_factory=dict)
    emulator: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    udp_mtu: dict = field(default_factory=dict)  # the figures of the MTU-size UDP test

    @property
    def ok(self) -> bool:
        return all(c.ok is not False for c in self.checks)

    def to_json(self) -> dict:
        return {
            "format": CALIBRATION_FORMAT,
            "testbed": self.testbed,
            "path": self.path,
            "ok": self.ok,
            "checks": [c.to_json() for c in self.checks],
            "inventory": self.inventory,
            "emulator": self.emulator,
            "warnings": self.warnings,
            "udp_mtu": self.udp_mtu,
        }


def calibrate(
    topo: Topology, opts: Options = Options(), progress: Say = quiet, inventory=None
) -> Calibration:
    """On the local testbed, or (`inventory`) on an SSH testbed of the default pair's
    hosts: the congestion control is the kernel's, else ITB's eBPF one (its preflight)."""
    with owner.exclusive("itb calibrate"):
        pair = default_pair(topo)
        tb = open_testbed(topo, cc.support(), inventory=inventory, say=progress, only=set(pair))
        tb.preflight([opts.cc])
        try:
            return _calibrate(topo, tb, pair, opts, progress, inventory)
        finally:
            tb.release()


def _calibrate(
    topo: Topology, tb: Testbed, pair: tuple[str, str], opts: Options, progress, inventory=None
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
    where = tb.inventory()
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
    _judge_emulator(cal, spec, stats)
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


def _fresh(em: Emulator | None, until_ns: int) -> None:
    """The emulator's log once it holds the rows up to `until_ns` (this machine's clock):
    linkem writes a row ~0.1 s after its interval and flushes every 0.1 s, so a log read
    at once lacks the last rows (a "hole" that is not one). A remote emulator's log is
    then copied here."""
    if em is None:
        return
    wait = (until_ns + LOG_SETTLE_NS - time.monotonic_ns()) / 1e9
    if wait > 0:
        time.sleep(wait)
    em.sync_logs()


def _measure(
    cal: Calibration, tb: Testbed, spec: PathSpec, opts: Options, kernel_cc: str, progress
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
    if spec.loss > 0:
        # Random loss, not the emulator, bounds TCP here: no verdict, the model for scale.
        mss = topo.mtu - 52  # IPv4 + TCP with timestamps
        mathis = mss * 8 / (idle_ms / 1e3) * 1.22 / spec.loss**0.5
        cal.checks.append(
            Check(
                "TCP goodput, 1 flow (loss-limited)",
                None,
                goodput / 1e6,
                "Mbit/s",
                None,
                f"{opts.cc}, {retrans} retransmissions; "
                f"Reno's response function at this loss: {mathis / 1e6:.1f}",
            )
        )
    elif spec.rate_bps:
        cal.checks.append(
            at_least(
                "TCP goodput, 1 flow",
                spec.rate_bps / 1e6,
                goodput / 1e6,
                "Mbit/s",
                TCP_MIN_SHARE_PCT,
                f"{opts.cc}, {retrans} retransmissions",
            )
        )
    else:
        cal.checks.append(
            Check(
                "TCP goodput, 1 flow (unlimited path)",
                None,
                goodput / 1e6,
                "Mbit/s",
                None,
                f"{opts.cc}, {retrans} retransmissions",
            )
        )
    if em and spec.rate_bps:
        _fresh(em, t1)
        t0, t1 = t0 + off, t1 + off
        lo = t0 + int(omit * 1e9)
        rows = monitor.between(monitor.direction_log(em.log_dir, direction, t0, t1), lo, t1)
        peak = max(monitor.windowed_rates_bps(rows, 100_000_000), default=0.0)
        cal.checks.append(
            _whole(
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
        extra = max(loaded) - idle_ms
        qd = spec.queue_delay_us
        if qd is not None:
            # One frame of serialisation and scheduling slack on top of a full queue.
            slack_ms = 0.5 + (1514 * 8e3 / spec.rate_bps if spec.rate_bps else 0)
            cal.checks.append(
                at_most(
                    "extra RTT under load (max)",
                    qd / 1000 + slack_ms,
                    extra,
                    "ms",
                    f"queue holds {qd / 1000:.2f} ms; "
                    f"median under load {probes.median(loaded):.2f} ms",
                )
            )

    if spec.rate_bps:
        _udp_rate(cal, tb, src, dst, addr, em, direction, spec, opts, progress)
        if tb.same_machine:
            _udp_mtu(cal, topo, src, dst, addr, dst_if, em, spec, opts, progress)
        else:
            cal.warnings.append(
                "the MTU-size UDP test (the receiver's interface counters, "
                "the emulator's threads) runs on the local testbed only"
            )
    if spec.loss > 0:
        _loss(cal, iperf, spec, opts, progress)
    if em:
        _fresh(em, time.monotonic_ns())
        _log_whole(cal, em, began + off, off)


def _udp_rate(cal, tb: Testbed, src, dst, addr, em, direction, spec, opts, progress) -> None:
    """Constant-rate UDP at 1.2 × C: what reaches the receiver (steady part, in frames)."""
    offered = spec.rate_bps * 1.2 * UDP_PAYLOAD / (UDP_PAYLOAD + FRAME_OVERHEAD)  # payload
    progress(
        f"UDP at 1.2 × the rate ({1.2 * spec.rate_bps / 1e6:.0f} Mbit/s of frames) "
        f"for {opts.udp_seconds:g} s"
    )
    sink = dst.spawn(
        [*tb.program(spec.dst, "udprate"), "recv", str(UDP_PORT), str(opts.udp_seconds + 3)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(0.3 if tb.same_machine else 1.0)  # the sink binds
        sent = json.loads(
            src.run(
                [
                    *tb.program(spec.src, "udprate"),
                    "send",
                    addr,
                    str(UDP_PORT),
                    str(offered),
                    str(opts.udp_seconds),
                    str(UDP_PAYLOAD),
                ],
                timeout=opts.udp_seconds + 30,
            ).stdout
        )
        got = json.loads(sink.communicate(timeout=opts.udp_seconds + 30)[0])
    finally:
        if sink.poll() is None:
            sink.kill()
            sink.wait()
    # Every date on this machine's clock (the sender's and the receiver's are their own)
    o_src, o_dst = tb.clock_offset_ns(spec.src), tb.clock_offset_ns(spec.dst)
    sent["start_ns"] -= o_src
    sent["end_ns"] -= o_src
    got["samples"] = [[t - o_dst, b] for t, b in got["samples"]]
    # Steady part: 1 s after the start (the queue fills) until 0.3 s before the end.
    t0, t1 = sent["start_ns"] + 1_000_000_000, sent["end_ns"] - 300_000_000
    payload_bps = udprate.rate_between(got["samples"], t0, t1)
    offered_bps = sent["bytes"] * 8e9 / (sent["end_ns"] - sent["start_ns"])
    if payload_bps is not None:
        frames = payload_bps * (UDP_PAYLOAD + FRAME_OVERHEAD) / UDP_PAYLOAD
        cal.checks.append(
            relative(
                "UDP at 1.2 × rate: delivered to the receiver (frames)",
                spec.rate_bps / 1e6,
                frames / 1e6,
                "Mbit/s",
                UDP_TOLERANCE_PCT,
                f"offered {offered_bps * (UDP_PAYLOAD + FRAME_OVERHEAD) / UDP_PAYLOAD / 1e6:.1f} "
                "Mbit/s of frames",
            )
        )
    if em:
        _fresh(em, t1)
        t0, t1 = t0 + em.clock_offset_ns, t1 + em.clock_offset_ns
        window = monitor.between(monitor.direction_log(em.log_dir, direction, t0, t1), t0, t1)
        rows = monitor.busy_span(window)
        if rows:
            cal.checks.append(
                _whole(
                    relative(
                        "UDP at 1.2 × rate: emulator departures",
                        spec.rate_bps / 1e6,
                        monitor.mean_rate_bps(rows) / 1e6,
                        "Mbit/s",
                        UDP_TOLERANCE_PCT,
                    ),
                    em,
                    direction,
                    window,
                    t0,
                    t1,
                )
            )
        else:  # a log that stopped must not pass silently
            cal.checks.append(
                Check(
                    "UDP at 1.2 × rate: emulator departures",
                    spec.rate_bps / 1e6,
                    None,
                    "Mbit/s",
                    UDP_TOLERANCE_PCT,
                    "the emulator's log holds no rows for this test",
                    ok=False,
                )
            )


def _whole(
    check: Check, em, direction: str, rows: list[monitor.Interval], lo_ns: int, hi_ns: int
) -> Check:
    """The check, failed if the emulator's log it was computed from has a hole between
    lo_ns and hi_ns: figures from a log with missing rows prove nothing."""
    gaps = monitor.gaps(em.log_dir, direction, [r.t_ns for r in rows], lo_ns, hi_ns)
    if gaps:
        check.ok = False
        check.cause = "log with a hole"
        check.detail = "; ".join(p for p in (check.detail, _gap_text(gaps, lo_ns)) if p)
    return check


def _gap_text(
    gaps: list[monitor.Gap], zero_ns: int, origin: str = " after the window started"
) -> str:
    g = gaps[0]
    more = f", {len(gaps) - 1} more gap(s)" if len(gaps) > 1 else ""
    return (
        f"the emulator's log ({monitor.DIRECTIONS[g.direction]}) lost the rows "
        f"{g.describe(zero_ns, origin)}{more}"
    )


def _log_whole(cal: Calibration, em, t0_ns: int, off: int = 0) -> None:
    """A failed check when the emulator's log lost rows between t0_ns and now, in
    either direction: every figure read from it meanwhile (the MTU-size UDP test's
    departures too) may be off. Dates on the emulator's clock (`off`: its offset)."""
    hi = time.monotonic_ns() + off - LOG_SETTLE_NS  # rows are written ~0.2 s after their interval
    time.sleep(LOG_SETTLE_NS / 1e9)
    gaps = [g for d in ("ab", "ba") for g in monitor.window_gaps(em.log_dir, d, t0_ns, hi)]
    if gaps:
        cal.checks.append(
            Check(
                LOG_CHECK,
                0,
                sum(g.rows or 0 for g in gaps),
                "rows",
                None,
                _gap_text(gaps, t0_ns, " after the calibration started"),
                ok=False,
                cause="rows lost",
            )
        )


def _judge_log(cal: Calibration, stats: dict) -> None:
    """Rows the emulator itself reported lost (at exit, in its stats) fail the
    calibration too, unless a check already said so."""
    lost = {d: stats.get(d, {}).get("log_rows_lost", 0) for d in ("ab", "ba")}
    if any(lost.values()) and not any(c.quantity == LOG_CHECK for c in cal.checks):
        cal.checks.append(
            Check(
                LOG_CHECK,
                0,
                sum(lost.values()),
                "rows",
                None,
                f"the emulator reported rows it could not write: {lost}",
                ok=False,
                cause="rows lost",
            )
        )


def _udp_mtu(cal, topo, src, dst, addr, dst_if, em, spec, opts, progress) -> None:
    """MTU-size UDP without GSO (UDT's traffic) at 1.2 × C: the receiver's interface
    counters, and where the time went when they fall short (udpmtu.py)."""
    mtu = min([topo.mtu, *(lk.mtu for lk in path_links(topo, spec.src, spec.dst))])
    quantity = "UDP at 1.2 × rate, MTU-size datagrams without GSO: at the receiver's interface"
    progress(
        f"UDP at 1.2 × the rate, one {mtu + udpmtu.ETH_HEADER}-byte frame per datagram "
        f"(iperf3), for {udpmtu.duration_s(opts.udp_seconds)} s"
    )
    delay_us = spec.forward.delay_us if spec.forward else 0
    figures, _ = udpmtu.run(
        src,
        dst,
        addr,
        dst_if,
        em,
        direction=spec.direction,
        rate_bps=spec.rate_bps,
        delay_us=delay_us,
        mtu=mtu,
        seconds=opts.udp_seconds,
        port=UDP_MTU_PORT,
    )
    if figures is None:
        cal.checks.append(
            Check(
                quantity,
                spec.rate_bps / 1e6,
                None,
                "Mbit/s",
                UDP_TOLERANCE_PCT,
                "no stream seen at the receiver's interface",
                ok=False,
            )
        )
        return
    check, warning = udpmtu.judge(figures, quantity, UDP_TOLERANCE_PCT)
    cal.checks.append(check)
    cal.udp_mtu = figures.to_json()
    if warning:
        cal.warnings.append(warning)


def _udp_buffer(cal: Calibration) -> str:
    """Largest socket buffer iperf3 may ask for: net.core.r/wmem_max are global (read-only
    inside a namespace), and iperf3 fails when it gets less than it asked for."""
    limits = [
        int(v)
        for k, v in cal.inventory.get("root_sysctls", {}).items()
        if k in ("net.core.rmem_max", "net.core.wmem_max") and v
    ]
    return str(min([UDP_SOCKET_BUFFER_MAX, *limits]))


def _loss(cal, iperf, spec, opts, progress) -> None:
    frame = LOSS_PAYLOAD + FRAME_OVERHEAD
    pps = (
        MAX_LOSS_PPS
        if spec.rate_bps is None
        else min(MAX_LOSS_PPS, int(spec.rate_bps * 0.5 / (frame * 8)))
    )
    n = opts.loss_packets
    progress(f"loss: {n} datagrams at {pps} packets/s (~{n / pps:.0f} s)")
    res = iperf.run(
        [
            "-u",
            "-b",
            str(pps * LOSS_PAYLOAD * 8),
            "-l",
            str(LOSS_PAYLOAD),
            "-w",
            _udp_buffer(cal),
            "-k",
            str(n),
        ],
        None,
        0,
        expected_s=n / pps,
    )
    recv = res["end"].get("sum_received", {})
    packets, lost = recv.get("packets", 0), recv.get("lost_packets", 0)
    measured = 100.0 * lost / packets if packets else 0.0
    expected = 100.0 * spec.loss
    ok = abs(measured - expected) <= 0.1
    cal.checks.append(
        Check(
            f"loss over {packets} datagrams",
            expected,
            measured,
            "%",
            0.1,
            "tolerance ±0.1 percentage point",
            ok=ok,
            error_pct=100.0 * (measured - expected) / expected,
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


def _judge_emulator(cal: Calibration, spec: PathSpec, stats: dict) -> None:
    if spec.bottleneck is None or spec.bottleneck.name not in stats:
        return
    s = stats[spec.bottleneck.name]
    cal.emulator.update({"stats": s})
    _judge_log(cal, s)
    cpu = cal.emulator.get("cpu_pct_during_tcp")
    for name in ("ab", "ba"):
        d = s.get(name, {})
        segs = max(1, d.get("tx_segments", 0))
        if d.get("late_packets", 0) / segs > LATE_SHARE_WARN:
            cal.warnings.append(
                f"link emulator ({name}) released {d['late_packets']} of {segs} packets "
                f"({100 * d['late_packets'] / segs:.2f} %) more than 200 µs late (max lag "
                f"{d.get('max_lag_us', 0) / 1000:.1f} ms): the machine is short of CPU for "
                "this experiment; timings of those packets are off"
            )
        for key, what in (
            ("socket_drops", "dropped at its socket (could not keep up)"),
            ("pool_drops", "dropped for lack of buffer memory"),
        ):
            if d.get(key, 0):
                cal.warnings.append(f"link emulator ({name}) {what}: {d[key]} packets")
    if cpu is not None and cpu > 90.0:
        cal.warnings.append(
            f"link emulator used {cpu:.0f} % of a core during the TCP test: "
            "it may limit the experiment"
        )
