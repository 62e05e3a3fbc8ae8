#!/usr/bin/env python3
"""Frame-rate benchmark: pre-built 1514-byte frames through linkem at 1, 5 and 10 Gbit/s —
frames per second carried, every kind of drop, the departure error — the per-packet
figure that TCP with GSO super-frames hides (UDT sends one datagram per frame).

Three namespaces of its own (`itbf-g` generator, `itbf-e` linkem, `itbf-s` sink), joined
by veth pairs; `framegen` (native/linkem) sends IPv4/UDP frames from g to s at the offered
rate (default: the link's rate, so that only a burst may fill the queue), linkem shapes
them to the rate with a 10 ms one-way delay and a queue of 5 ms at the rate, and the
sink's interface counts what arrived. A first row sends back to back over a plain veth pair between the
same two namespaces: the frame rate this machine's kernel carries with no emulator. Drops
are counted where they happen: linkem's
queue (the configured one), its receive socket, its pool, its transmit refusals, the
sink's interface and the kernel's backlogs (softnet). Everything is removed at the end,
also after a failure.

Run as root from the repository: `.venv/bin/python bench/frames.py` (options: --seconds,
--offer (× the rate; 0: back to back), --rates, --size, --json OUT).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from itb.backends.procs import cpu_seconds

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "native" / "target" / "release"
NS_G, NS_E, NS_S = "itbf-g", "itbf-e", "itbf-s"
IP_G, IP_S = "198.18.9.1", "198.18.9.2"
# The frames are addressed to a MAC the sink does not have: its interface counts them and
# its IP layer drops them at once (as a switch port would never deliver them), so the
# sink's own stack, which runs inside linkem's transmit on veth, costs next to nothing.
# On real hardware the receiver is another machine; here it would share linkem's CPU.
OTHER_MAC = "02:00:00:00:00:02"
DELAY_US = 10_000
QUEUE_S = 0.005


@dataclass
class Row:
    rate_gbps: float
    size: int
    offered_mpps: float
    carried_mpps: float
    line_mpps: float  # the most frames of this size the rate can carry
    drops_queue: int
    drops_other: int  # linkem's socket, pool and transmit, the sink's, softnet
    drops_detail: dict
    late_pct: float
    emu_cpu_pct: float
    dep_p50_us: int | None
    dep_p99_us: int | None
    dep_samples: int


def sh(*argv: str, ns: str | None = None, check: bool = True) -> str:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
    return subprocess.run(cmd, check=check, capture_output=True, text=True).stdout


def down() -> None:
    for ns in (NS_G, NS_E, NS_S):
        sh("ip", "netns", "del", ns, check=False)


def up() -> tuple[str, str]:
    """The three namespaces and their links; the MACs of the generator's and sink's ends."""
    for ns in (NS_G, NS_E, NS_S):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "link", "add", "eth0", "netns", NS_G, "type", "veth", "peer", "a0", "netns", NS_E)
    sh("ip", "link", "add", "eth0", "netns", NS_S, "type", "veth", "peer", "b0", "netns", NS_E)
    for ifn in ("a0", "b0"):
        sh("sysctl", "-qw", f"net.ipv6.conf.{ifn}.disable_ipv6=1", ns=NS_E)
        sh("ip", "-n", NS_E, "link", "set", ifn, "up")
    for ns, ip in ((NS_G, IP_G), (NS_S, IP_S)):
        sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
    # the reference: the same two ends joined directly by one veth pair (eth1)
    sh("ip", "link", "add", "eth1", "netns", NS_G, "type", "veth", "peer", "eth1", "netns", NS_S)
    for ns in (NS_G, NS_S):
        sh("ip", "-n", ns, "link", "set", "eth1", "up")
    return mac(NS_G), mac(NS_S)


def mac(ns: str) -> str:
    return sh("cat", "/sys/class/net/eth0/address", ns=ns).strip()


def counter(ns: str, name: str, ifname: str = "eth0") -> int:
    return int(sh("cat", f"/sys/class/net/{ifname}/statistics/{name}", ns=ns))


def generate(ifname: str, macs: tuple[str, str], args, rate_bps: int | None) -> dict:
    """framegen in the generator's namespace: its JSON summary."""
    gen = [str(BIN / "framegen"), "--ifname", ifname, "--src-mac", macs[0]]
    gen += ["--dst-mac", OTHER_MAC, "--src-ip", IP_G, "--dst-ip", IP_S]
    gen += ["--size", str(args.size), "--seconds", str(args.seconds)]
    if rate_bps:
        gen += ["--rate-bps", str(rate_bps)]
    return json.loads(sh(*gen, ns=NS_G).strip().splitlines()[-1])


def reference(args, macs: tuple[str, str]) -> tuple[float, float]:
    """Frames per second (offered, arrived) sent back to back over a plain veth pair: what
    this machine's kernel carries without an emulator in the way."""
    rx0 = counter(NS_S, "rx_packets", "eth1")
    out = generate("eth1", macs, args, None)
    time.sleep(0.2)
    rx = counter(NS_S, "rx_packets", "eth1") - rx0
    return out["frames"] / out["seconds"] / 1e6, rx / out["seconds"] / 1e6


def softnet_drops() -> int:
    """Frames the kernel's per-CPU backlogs dropped (second column, hex), all CPUs."""
    with open("/proc/net/softnet_stat") as f:
        return sum(int(line.split()[1], 16) for line in f)


def measure(rate_bps: int, args, macs: tuple[str, str], work: Path) -> Row:
    log_dir = work / f"log-{rate_bps}"
    queue = int(rate_bps * QUEUE_S / 8)
    cfg = {
        "interfaces": ["a0", "b0"],
        "log_dir": str(log_dir),
        "directions": {
            "ab": {"rate_bps": rate_bps, "delay_us": DELAY_US, "queue_bytes": queue},
            "ba": {"rate_bps": None, "delay_us": DELAY_US},
        },
    }
    path = work / f"linkem-{rate_bps}.json"
    path.write_text(json.dumps(cfg))
    em = subprocess.Popen(
        ["ip", "netns", "exec", NS_E, str(BIN / "linkem"), "--config", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert em.stdout is not None
        line = em.stdout.readline()
        if '"ready"' not in line:
            raise RuntimeError(f"linkem did not start: {line!r}")
        pid = json.loads(line)["pid"]
        rx0, drop0, soft0 = (
            counter(NS_S, "rx_packets"),
            counter(NS_S, "rx_dropped"),
            softnet_drops(),
        )
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        out = generate("eth0", macs, args, int(rate_bps * args.offer) if args.offer > 0 else None)
        time.sleep(DELAY_US / 1e6 + QUEUE_S + 0.2)  # the last frames cross the delay
        cpu1, t1 = cpu_seconds(pid), time.monotonic()
        rx = counter(NS_S, "rx_packets") - rx0
        sink_drops = counter(NS_S, "rx_dropped") - drop0
        soft = softnet_drops() - soft0
    finally:
        em.terminate()
        em.wait(timeout=10)
    stats = json.loads((log_dir / "linkem-stats.json").read_text())["ab"]
    detail = {
        "linkem_socket": stats["socket_drops"],
        "linkem_pool": stats["pool_drops"],
        "linkem_tx_refused": stats["tx_errors"],
        "generator_refused": out["refused"],
        "sink_interface": sink_drops,
        "softnet": soft,
    }
    dep = stats.get("departure_error") or {}
    secs = out["seconds"]
    return Row(
        rate_gbps=rate_bps / 1e9,
        size=args.size,
        offered_mpps=out["frames"] / secs / 1e6,
        carried_mpps=rx / secs / 1e6,
        line_mpps=rate_bps / (args.size * 8) / 1e6,
        drops_queue=stats["drops_queue"],
        drops_other=sum(detail.values()),
        drops_detail=detail,
        late_pct=100 * stats["late_packets"] / max(1, stats["tx_segments"]),
        emu_cpu_pct=100 * (cpu1 - cpu0) / (t1 - t0),
        dep_p50_us=dep.get("abs_p50_us") if dep.get("samples") else None,
        dep_p99_us=dep.get("abs_p99_us") if dep.get("samples") else None,
        dep_samples=dep.get("samples", 0),
    )


def fmt(x, spec=".3f") -> str:
    return "-" if x is None else format(x, spec)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--offer", type=float, default=1.0, help="× the link rate; 0: back to back")
    ap.add_argument("--rates", default="1,5,10", help="link rates in Gbit/s (default 1,5,10)")
    ap.add_argument("--size", type=int, default=1514, help="frame size, Ethernet header on")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench/frames.py needs root (network namespaces)", file=sys.stderr)
        return 2
    for b in ("linkem", "framegen"):
        if not (BIN / b).exists():
            print(f"{BIN / b} is missing: run `make native` first", file=sys.stderr)
            return 2
    offer = "back to back" if args.offer <= 0 else f"{args.offer:g} × the rate"
    print(f"{args.size}-byte frames offered {offer} for {args.seconds:g} s; linkem: 10 ms, ")
    print(f"queue {QUEUE_S * 1000:g} ms at the rate; Mpps = 10⁶ frames/s")
    head = (
        f"{'rate':>8}{'offered':>9}{'carried':>9}{'line':>8}{'drops q':>9}{'other':>9}"
        f"{'late%':>7}{'emu CPU%':>9}{'dep p50':>8}{'p99 µs':>8}"
    )
    print(head + "\n" + "-" * len(head))
    rows = []
    down()
    with tempfile.TemporaryDirectory(prefix="itb-frames-") as tmp:
        try:
            macs = up()
            off, got = reference(args, macs)
            print(f"{'kernel':>8}{off:>9.3f}{got:>9.3f}   (a plain veth pair, back to back)")
            for g in args.rates.split(","):
                r = measure(int(float(g) * 1e9), args, macs, Path(tmp))
                rows.append(r)
                print(
                    f"{g + 'G':>8}{r.offered_mpps:>9.3f}{r.carried_mpps:>9.3f}"
                    f"{r.line_mpps:>8.3f}{r.drops_queue:>9}{r.drops_other:>9}"
                    f"{r.late_pct:>7.2f}{r.emu_cpu_pct:>9.0f}{fmt(r.dep_p50_us, 'd'):>8}"
                    f"{fmt(r.dep_p99_us, 'd'):>8}",
                    flush=True,
                )
                if r.drops_other:
                    print(f"{'':>8}other drops: {r.drops_detail}")
        finally:
            down()
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
