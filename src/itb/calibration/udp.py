"""The calibration's UDP checks: a constant-rate stream at 1.2 × the rate (what reaches
the receiver, what the emulator released), MTU-size datagrams without GSO (udpmtu), and
the loss over many small datagrams (iperf3)."""

from __future__ import annotations

import json
import subprocess
import time

from itb.backends.hostside import udprate
from itb.backends.testbed import Hosts
from itb.calibration import udpmtu
from itb.calibration.emulator import fresh, whole
from itb.calibration.record import Calibration
from itb.calibration.udpmtu_verdict import judge
from itb.calibration.verdict import Check, relative
from itb.emulation import monitor
from itb.scenario.testbed.paths import path_links

UDP_PORT = 5301
UDP_MTU_PORT = 5302
UDP_PAYLOAD = 1472  # one 1514-byte frame at MTU 1500 over IPv4
UDP_SOCKET_BUFFER_MAX = 16 * 1024 * 1024
LOSS_PAYLOAD = 64  # small datagrams: 10^6 of them in seconds
FRAME_OVERHEAD = 14 + 20 + 8  # Ethernet + IPv4 + UDP headers
MAX_LOSS_PPS = 40_000  # sender, emulator and receiver all keep up on 2 cores
UDP_TOLERANCE_PCT = 1.0


def udp_rate(cal, tb: Hosts, src, dst, addr, em, direction, spec, opts, progress) -> None:
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
        fresh(em, t1)
        t0, t1 = t0 + em.clock_offset_ns, t1 + em.clock_offset_ns
        window = monitor.between(monitor.direction_log(em.log_dir, direction, t0, t1), t0, t1)
        rows = monitor.busy_span(window)
        if rows:
            cal.checks.append(
                whole(
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


def udp_mtu(cal, topo, src, dst, addr, dst_if, em, spec, opts, progress) -> None:
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
    check, warning = judge(figures, quantity, UDP_TOLERANCE_PCT)
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


def udp_loss(cal, iperf, spec, opts, progress) -> None:
    """The configured loss against what many small datagrams lose (iperf3), within ±0.1
    percentage point."""
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
