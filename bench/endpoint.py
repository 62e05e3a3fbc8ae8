#!/usr/bin/env python3
"""Traffic-endpoint benchmark: ITB's `flow` against iperf3 on the unlimited local path.

Two network namespaces (itbb-a, itbb-b) joined by one veth pair (10.250.0.1/24 and
10.250.0.2/24, default offloads, no qdisc changes). Per round, one TCP transfer of a fixed
volume with each tool (iperf3 first, then flow), 1 stream, cubic, sender in itbb-a and
receiver in itbb-b, pinned to CPUs 0 and 1 by default (--pin none lets the scheduler place
them, which on 2 cores adds run-to-run noise). Reported per run: receiver-side goodput, and
CPU seconds of the sender and receiver processes (their own rusage, from wait4) per Gbit
transferred. Then the medians over rounds and the ratios flow / iperf3 (targets: goodput
>= 0.95, CPU per Gbit <= 1.20).

Run as root from the repository, after `cd native && cargo build --release`:
    python3 bench/endpoint.py [--rounds 3] [--gbytes 16] [--pin 0,1|none] [--json OUT]
Standard library only. Exit status 0 once figures are printed (targets are reported, not
asserted), 1 if a tool is missing, 2 if not root.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass

NS_A, NS_B = "itbb-a", "itbb-b"
VETH_A, VETH_B = "itbb-va", "itbb-vb"
ADDR_A, ADDR_B = "10.250.0.1", "10.250.0.2"
IPERF_PORT, FLOW_PORT = 5201, 5001
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOW = os.path.join(ROOT, "native", "target", "release", "flow")
TIMEOUT_S = 120.0

# Every process this script starts and has not reaped yet: killed in `finally`.
_children: dict[int, subprocess.Popen] = {}


@dataclass
class Run:
    tool: str
    round: int
    bytes: int
    goodput_gbps: float
    cpu_send_s: float
    cpu_recv_s: float

    @property
    def cpu_per_gbit(self) -> float:
        return (self.cpu_send_s + self.cpu_recv_s) / (self.bytes * 8 / 1e9)


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def teardown() -> None:
    for ns in (NS_A, NS_B):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def setup() -> None:
    teardown()
    ip("netns", "add", NS_A)
    ip("netns", "add", NS_B)
    ip("link", "add", VETH_A, "netns", NS_A, "type", "veth", "peer", "name", VETH_B, "netns", NS_B)
    for ns, dev, addr in ((NS_A, VETH_A, ADDR_A), (NS_B, VETH_B, ADDR_B)):
        ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
        ip("-n", ns, "link", "set", "lo", "up")
        ip("-n", ns, "link", "set", dev, "up")


PIN: dict[str, str] = {}


def in_ns(ns: str, argv: list[str]) -> list[str]:
    # `ip netns exec` (and taskset) exec the tool: the child's pid and rusage are its own.
    pin = ["taskset", "-c", PIN[ns]] if ns in PIN else []
    return ["ip", "netns", "exec", ns, *pin, *argv]


def start(argv: list[str], **kw) -> subprocess.Popen:
    p = subprocess.Popen(argv, **kw)
    _children[p.pid] = p
    return p


def reap(p: subprocess.Popen, timeout: float = TIMEOUT_S) -> tuple[int, float]:
    """Wait for p (kill it after timeout); its exit status and CPU seconds (user + sys)."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            break
        if time.monotonic() > deadline:
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.02)
    _children.pop(p.pid, None)
    p.returncode = os.waitstatus_to_exitcode(status)  # we reaped it, not Popen
    return p.returncode, ru.ru_utime + ru.ru_stime


def wait_listening(ns: str, port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(
            in_ns(ns, ["ss", "-Hltn", f"sport = :{port}"]), capture_output=True, text=True
        ).stdout
        if out.strip():
            return
        time.sleep(0.02)
    raise RuntimeError(f"nothing listening on port {port} in {ns}")


def run_iperf3(rnd: int, volume: int, cc: str) -> Run:
    srv = start(
        in_ns(NS_B, ["iperf3", "-s", "-1", "-J", "-B", ADDR_B, "-p", str(IPERF_PORT)]),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    wait_listening(NS_B, IPERF_PORT)
    cli = start(
        in_ns(
            NS_A, ["iperf3", "-c", ADDR_B, "-p", str(IPERF_PORT), "-n", str(volume), "-C", cc, "-J"]
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rc_c, cpu_c = reap(cli)
    out = srv.stdout.read()
    rc_s, cpu_s = reap(srv)
    if rc_c or rc_s:
        raise RuntimeError(f"iperf3 failed (client {rc_c}, server {rc_s})")
    recv = json.loads(out)["end"]["sum_received"]
    return Run("iperf3", rnd, int(recv["bytes"]), recv["bits_per_second"] / 1e9, cpu_c, cpu_s)


def run_flow(rnd: int, volume: int, cc: str, tmp: str) -> Run:
    rlog, rsum = os.path.join(tmp, "r.csv"), os.path.join(tmp, "r.json")
    slog, ssum = os.path.join(tmp, "s.csv"), os.path.join(tmp, "s.json")
    rcv = start(
        in_ns(
            NS_B,
            [
                FLOW,
                "recv",
                "--listen",
                f"{ADDR_B}:{FLOW_PORT}",
                "--streams",
                "1",
                "--bytes",
                str(volume),
                "--log",
                rlog,
                "--summary",
                rsum,
            ],
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    if rcv.stdout.readline().strip() != "ready":
        raise RuntimeError("flow recv did not start")
    snd = start(
        in_ns(
            NS_A,
            [
                FLOW,
                "send",
                "--to",
                f"{ADDR_B}:{FLOW_PORT}",
                "--bytes",
                str(volume),
                "--streams",
                "1",
                "--cc",
                cc,
                "--log",
                slog,
                "--summary",
                ssum,
            ],
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rc_c, cpu_c = reap(snd)
    rc_s, cpu_s = reap(rcv)
    if rc_c or rc_s:
        raise RuntimeError(f"flow failed (send {rc_c}, recv {rc_s})")
    with open(rsum) as f:
        r = json.load(f)
    dur_ns = r["last_byte_ns"] - r["first_byte_ns"]
    return Run("flow", rnd, r["bytes"], r["bytes"] * 8 / dur_ns, cpu_c, cpu_s)


def print_run(r: Run) -> None:
    print(
        f"{r.tool:<8}{r.round:>6}{r.bytes / 1e9:>9.1f}{r.goodput_gbps:>10.2f}"
        f"{r.cpu_send_s:>9.2f}{r.cpu_recv_s:>9.2f}{r.cpu_per_gbit:>10.4f}",
        flush=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gbytes", type=float, default=16.0, help="volume per run, in 10^9 bytes")
    ap.add_argument("--cc", default="cubic")
    ap.add_argument("--json", help="write all runs and the ratios here")
    ap.add_argument(
        "--pin",
        metavar="SEND,RECV",
        default="0,1" if (os.cpu_count() or 1) > 1 else "none",
        help="CPUs for sender and receiver (taskset; default 0,1), or 'none'",
    )
    args = ap.parse_args()
    if args.pin != "none":
        PIN[NS_A], PIN[NS_B] = args.pin.split(",")
    if os.geteuid() != 0:
        print("bench/endpoint.py needs root (network namespaces)", file=sys.stderr)
        return 2
    missing = [t for t in ("ip", "ss", "iperf3", "taskset") if not shutil.which(t)]
    if not os.access(FLOW, os.X_OK):
        missing.append(FLOW + " (cd native && cargo build --release)")
    if missing:
        print("missing: " + ", ".join(missing), file=sys.stderr)
        return 1
    volume = int(args.gbytes * 1e9)
    runs: list[Run] = []
    tmp = tempfile.mkdtemp(prefix="itb-endpoint-")
    try:
        setup()
        pin = f"sender on CPU {PIN[NS_A]}, receiver on CPU {PIN[NS_B]}" if PIN else "not pinned"
        print(
            f"one {args.cc} TCP stream per run, {volume / 1e9:g} GB, {NS_A} -> {NS_B} over veth, "
            f"{pin}; CPU = sender + receiver process (user + sys)"
        )
        head = (
            f"{'tool':<8}{'round':>6}{'GB':>9}{'Gbit/s':>10}{'send s':>9}{'recv s':>9}"
            f"{'s/Gbit':>10}"
        )
        print(head)
        print("-" * len(head))
        for rnd in range(1, args.rounds + 1):
            for tool in ("iperf3", "flow"):
                r = (
                    run_iperf3(rnd, volume, args.cc)
                    if tool == "iperf3"
                    else run_flow(rnd, volume, args.cc, tmp)
                )
                runs.append(r)
                print_run(r)
    finally:
        for p in list(_children.values()):
            try:
                p.send_signal(signal.SIGKILL)
                os.waitpid(p.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        teardown()
        shutil.rmtree(tmp, ignore_errors=True)

    med = {}
    for tool in ("iperf3", "flow"):
        rs = [r for r in runs if r.tool == tool]
        med[tool] = (
            statistics.median(r.goodput_gbps for r in rs),
            statistics.median(r.cpu_per_gbit for r in rs),
        )
        print(
            f"median {tool:<8} goodput {med[tool][0]:6.2f} Gbit/s   CPU {med[tool][1]:.4f} s/Gbit"
        )
    g = med["flow"][0] / med["iperf3"][0]
    c = med["flow"][1] / med["iperf3"][1]
    print(
        f"flow / iperf3: goodput {g:.3f} (target >= 0.95: {'met' if g >= 0.95 else 'MISSED'}), "
        f"CPU per Gbit {c:.3f} (target <= 1.20: {'met' if c <= 1.20 else 'MISSED'})"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "runs": [asdict(r) | {"cpu_per_gbit": r.cpu_per_gbit} for r in runs],
                    "goodput_ratio": g,
                    "cpu_per_gbit_ratio": c,
                },
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
