#!/usr/bin/env python3
"""Link-emulator benchmark: TCP goodput and RTT error through (a) a plain kernel router
path (the physical reference) and (b) ITB's link emulator at 0, 20 and 200 ms RTT, for
bottleneck rates 100 Mbit/s, 1 Gbit/s, 10 Gbit/s and unlimited; with the emulator's CPU
use and peak RSS next to its memory bound; then the highest rate at which the accuracy
targets hold at 20 ms RTT.

Run as root from the repository: `make bench` (or `.venv/bin/python bench/emulator.py`).
Options: --seconds N (TCP test length, default 6), --quick (fewer points), --json OUT.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass

from itb.backends import local, procs
from itb.calibration import probes
from itb.emulation import monitor
from itb.scenario import load_testbed
from itb.scenario.testbed.model import Topology
from itb.scenario.testbed.pathspec import path_spec

RATES = ["100Mbit", "1Gbit", "10Gbit", "unlimited"]
RTTS = ["0ms", "20ms", "200ms"]
LADDER = ["1Gbit", "2.5Gbit", "5Gbit", "10Gbit", "15Gbit", "20Gbit", "25Gbit", "30Gbit", "40Gbit"]
LADDER_KEEP_GOING = "10Gbit"  # above this step the ladder stops at its first inaccurate one
MIB = 1 << 20


@dataclass
class Row:
    path: str
    mtu: int
    rate: str
    rtt: str
    goodput_mbps: float
    share_pct: float | None
    peak_pct: float | None
    rtt_ms: float
    rtt_err_pct: float | None
    retrans: int
    cpu_pct: float | None
    late_pct: float | None  # data direction, after the ramp: share released > 200 µs late
    rss_mib: float | None
    bound_mib: float | None
    # departure error of sampled data frames (kernel transmit stamp − schedule), µs
    dep_p50_us: int | None = None
    dep_p99_us: int | None = None
    dep_samples: int | None = None

    @property
    def accurate(self) -> bool:
        return (
            self.share_pct is not None
            and self.share_pct >= 90.0
            and (self.peak_pct or 0) <= 100.5
            and (self.rtt_err_pct is None or abs(self.rtt_err_pct) <= 1.0)
            and (self.late_pct or 0) <= 1.0
        )

    @property
    def tcp_max_pct(self) -> float | None:
        """Goodput as a share of the most TCP can carry at the rate: payload (MTU − 52 B
        of IP and TCP headers with timestamps) over the frame (MTU + 14 B of Ethernet)."""
        if self.share_pct is None:
            return None
        return self.share_pct * (self.mtu + 14) / (self.mtu - 52)


def reference(topo: Topology) -> Topology:
    """Same dumbbell with a plain veth between the routers: kernel forwarding, tbf for a
    limited rate, no delay (this kernel has no netem)."""
    links = tuple(
        lk.model_copy(update={"emulated": False}) if lk.kind == "bottleneck" else lk
        for lk in topo.links
    )
    return topo.model_copy(update={"links": links})


def measure(topo: Topology, label: str, rate: str, rtt: str, seconds: float, cc: str) -> Row:
    spec = path_spec(topo, "l1", "r1")
    state = local.up(topo)
    stats = {}
    try:
        st = local.status(state)
        dst = next(h["ipv4"] for h in st["hosts"] if h["name"] == "r1")
        src, sink = local.host(state, "l1"), local.host(state, "r1")
        probes.ping(src, dst, 3, 0.1)
        rtts = probes.ping(src, dst, 50, 0.02)
        ems = local.emulators_of(state)
        em = ems[0] if ems else None
        omit = max(1, int(spec.rtt_us * 30 / 1e6) + 1)
        cpu0, t0 = (procs.cpu_seconds(em.pid) if em else 0.0), time.monotonic_ns()
        res = probes.Iperf(src, sink, dst).run(["-C", cc], seconds, omit)
        t1, cpu1 = time.monotonic_ns(), (procs.cpu_seconds(em.pid) if em else 0.0)
        peak = late = None
        if em:
            rows = monitor.between(
                monitor.direction_log(em.log_dir, spec.direction), t0 + omit * 1_000_000_000, t1
            )
            # after the ramp, as the goodput: segments of the data direction released
            # more than 200 µs after their time, over those that departed
            late = 100 * sum(r.late_packets for r in rows) / max(1, sum(r.packets for r in rows))
            if spec.rate_bps:
                peak = max(monitor.windowed_rates_bps(rows, 100_000_000), default=0.0)
    finally:
        stats = local.down()
    goodput = res["end"]["sum_received"]["bits_per_second"]
    median = statistics.median(rtts)
    configured_ms = spec.rtt_us / 1000
    s = next(iter(stats.values()), None)
    rss = bound = None
    if s:
        rss = s["peak_rss_bytes"] / MIB
        rate_bps = spec.rate_bps or goodput
        fwd, rev = spec.forward, spec.bottleneck.reverse
        held = sum(rate_bps * d.delay_us / 8e6 + (d.queue_bytes or 0) for d in (fwd, rev))
        bound = (1.5 * held) / MIB + 64
    return Row(
        path=label,
        mtu=topo.mtu,
        rate=rate,
        rtt=rtt,
        goodput_mbps=goodput / 1e6,
        share_pct=100 * goodput / spec.rate_bps if spec.rate_bps else None,
        peak_pct=100 * peak / spec.rate_bps if peak and spec.rate_bps else None,
        rtt_ms=median,
        rtt_err_pct=100 * (median - configured_ms) / configured_ms if configured_ms else None,
        retrans=res["end"]["sum_sent"].get("retransmits", 0),
        cpu_pct=100 * (cpu1 - cpu0) / ((t1 - t0) / 1e9) if em else None,
        late_pct=late,
        rss_mib=rss,
        bound_mib=bound,
        **departure(s, spec.direction),
    )


def departure(stats: dict | None, direction: str) -> dict:
    """The data direction's departure-error percentiles from linkem's stats."""
    d = (stats or {}).get(direction, {}).get("departure_error") or {}
    if not d.get("samples"):
        return {}
    return {
        "dep_p50_us": d["abs_p50_us"],
        "dep_p99_us": d["abs_p99_us"],
        "dep_samples": d["samples"],
    }


def fmt(x, spec=".1f") -> str:
    return "-" if x is None else format(x, spec)


def print_header() -> None:
    head = (
        f"{'path':<8}{'MTU':>5}{'rate':>10}{'RTT':>7}{'goodput':>10}{'%C':>7}{'%max':>7}{'peak%C':>8}"
        f"{'RTT ms':>9}{'RTT err%':>9}{'retx':>7}{'emu CPU%':>9}{'late%':>7}"
        f"{'RSS MiB':>9}{'bound':>8}{'dep p50':>8}{'p99 µs':>8}"
    )
    print(head)
    print("-" * len(head))


def print_row(r: Row) -> None:
    print(
        f"{r.path:<8}{r.mtu:>5}{r.rate:>10}{r.rtt:>7}{r.goodput_mbps:>10.1f}{fmt(r.share_pct):>7}{fmt(r.tcp_max_pct):>7}"
        f"{fmt(r.peak_pct):>8}{r.rtt_ms:>9.3f}{fmt(r.rtt_err_pct, '+.2f'):>9}"
        f"{r.retrans:>7}{fmt(r.cpu_pct, '.0f'):>9}{fmt(r.late_pct, '.2f'):>7}"
        f"{fmt(r.rss_mib):>9}{fmt(r.bound_mib, '.0f'):>8}"
        f"{fmt(r.dep_p50_us, 'd'):>8}{fmt(r.dep_p99_us, 'd'):>8}",
        flush=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--quick", action="store_true", help="only 20 ms RTT, fewer rates")
    ap.add_argument("--json", help="write all rows here")
    ap.add_argument(
        "--cc",
        default="cubic",
        help="congestion control of the iperf3 flow (default: Linux's cubic)",
    )
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench/emulator.py needs root (network namespaces)", file=sys.stderr)
        return 2
    local.clean()
    rows: list[Row] = []
    rtts = ["20ms"] if args.quick else RTTS
    print(f"one iperf3 flow ({args.cc}) per row, {args.seconds:g} s after its ramp")
    print_header()
    for rate in RATES:
        topo = load_testbed(
            None, {"pairs": 1, "rate": rate, "rtt": "0ms", "access_rate": "unlimited"}
        )
        rows.append(measure(reference(topo), "kernel", rate, "0ms", args.seconds, args.cc))
        print_row(rows[-1])
        for rtt in rtts:
            topo = load_testbed(
                None, {"pairs": 1, "rate": rate, "rtt": rtt, "access_rate": "unlimited"}
            )
            rows.append(measure(topo, "linkem", rate, rtt, args.seconds, args.cc))
            print_row(rows[-1])
    best = {mtu: ladder(mtu, args) for mtu in (1500, 9000)}
    rows.extend(r for rs in best.values() for r in rs[1])
    for mtu, (rate, _) in best.items():
        print(
            f"=> highest accurate bottleneck rate at 20 ms RTT, MTU {mtu}: "
            f"{rate or 'none of ' + str(LADDER)}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump([asdict(r) | {"accurate": r.accurate} for r in rows], f, indent=1)
    return 0


def ladder(mtu: int, args) -> tuple[str | None, list[Row]]:
    """The highest rate of LADDER at 20 ms RTT that is still accurate, and the rows."""
    print(
        f"\nladder at 20 ms RTT, MTU {mtu}: goodput ≥ 90 %, peak ≤ 100.5 %, RTT ±1 %, "
        "late ≤ 1 %; on above 10 Gbit/s until a step fails"
    )
    print_header()
    best, rows = None, []
    for rate in LADDER:
        topo = load_testbed(
            None, {"pairs": 1, "rate": rate, "rtt": "20ms", "mtu": mtu, "access_rate": "unlimited"}
        )
        r = measure(topo, "linkem", rate, "20ms", args.seconds, args.cc)
        rows.append(r)
        print_row(r)
        if r.accurate:
            best = rate
        elif LADDER.index(rate) > LADDER.index(LADDER_KEEP_GOING):
            break
    return best, rows


if __name__ == "__main__":
    sys.exit(main())
