"""MTU-size UDP without GSO — UDT's traffic — at 1.2 × the rate: what reaches the
receiver's interface when every datagram is one frame and one system call.

iperf3 -u sends one datagram per sendto() (no UDP_SEGMENT). The figures come from kernel
counters sampled every 50 ms with CLOCK_MONOTONIC stamps inside the namespaces
(counters.py): the receiver's interface `rx_bytes`/`rx_packets` (a veth counts each frame
from its Ethernet header on, no FCS or preamble: the emulator's wire bytes, 1514 per
1472-byte datagram at MTU 1500), the emulator's in-interface `rx_*` and out-interface
`tx_bytes`/`tx_dropped`, the time the emulator's thread for this direction and the sender
ran and waited for a CPU, the whole host's idle time; and the emulator's 1 ms log over
the same window. When the receiver gets less than the rate, the chain says where the time
went: the link idle for lack of packets (its queue ran empty: the sender paused longer
than the queue lasts), or released by the emulator but not (yet) at the receiver; and
whether the host was short of CPU for it (that verdict is udpmtu_verdict.py's; here the
test is run and its figures taken).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from itb.backends.host import NetnsHost
from itb.emulation import monitor
from itb.errors import BackendError

OFFER = 1.2  # offered load, × the configured rate, in frames
RAMP_S = 1.0  # from the first frame at the receiver to the start of the window
START_BYTES = 100_000  # the stream has begun once this much more arrived (not ARP, not control)
ETH_HEADER = 14


@dataclass
class Figures:
    """One test's figures; rates in bit/s of frames, over the same window."""

    rate_bps: float
    frame_bytes: int
    window_s: float
    arrived_bps: float  # the receiver's interface rx_bytes
    arrived_pps: float
    offered_bps: float | None = None  # the emulator's in-interface rx_bytes
    offered_pps: float | None = None
    departed_bps: float | None = None  # the emulator's log: wire bytes by departure time
    empty_ms: int | None = None  # 1 ms intervals ending with an empty queue
    intervals: int | None = None
    late: int | None = None  # released > 200 µs after their time
    max_lag_us: float | None = None
    released_bps: float | None = None  # the emulator's out-interface tx_bytes
    refused: int | None = None  # out-interface tx_dropped: frames the kernel did not take
    emulator_cpu_pct: float | None = None  # the direction's thread ran, % of one core
    emulator_wait_pct: float | None = None  # ... was runnable but waited for a CPU
    sender_cpu_pct: float | None = None  # iperf3 client, likewise
    sender_wait_pct: float | None = None
    host_busy_pct: float | None = None  # % of all cores
    steal_pct: float | None = None
    cores: int | None = None

    @property
    def needed_pps(self) -> float:
        return self.rate_bps / (self.frame_bytes * 8)

    def to_json(self) -> dict:
        return asdict(self)


class Series:
    """A counters sampler's output: values by spec, rates between two times."""

    def __init__(self, out: dict | None):
        out = out or {}
        self.rows: list[list[int]] = out.get("rows") or []
        self.col: dict[str, int] = {}
        i = 1
        for spec in out.get("specs", []):
            self.col[spec] = i
            i += 2 if spec == "cpu" or spec.startswith("sched:") else 1

    def has(self, spec: str) -> bool:
        return spec in self.col and bool(self.rows)

    def rate(self, spec: str, t0: int, t1: int, second: bool = False) -> tuple[float, float] | None:
        """(per second, seconds) of a value between the first row ≥ t0 and the last ≤ t1."""
        if not self.has(spec):
            return None
        c = self.col[spec] + int(second)
        inside = [r for r in self.rows if t0 <= r[0] <= t1]
        if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
            return None
        dt = (inside[-1][0] - inside[0][0]) / 1e9
        return (inside[-1][c] - inside[0][c]) / dt, dt


def window(rows: list[list[int]], seconds: float) -> tuple[int, int] | None:
    """The steady window from the receiver's rx_bytes rows (column 1): RAMP_S after the
    stream's first frames, `seconds` long, ending before its last frames."""
    if not rows:
        return None
    base = rows[0][1]
    started = next((r[0] for r in rows if r[1] - base > START_BYTES), None)
    if started is None:
        return None
    last = max(r[0] for r, p in zip(rows[1:], rows) if r[1] > p[1])
    t0 = started + int(RAMP_S * 1e9)
    t1 = min(t0 + int(seconds * 1e9), last - 200_000_000)
    return (t0, t1) if t1 > t0 else None


def _rate(series: Series, spec: str, t0: int, t1: int, second: bool = False) -> tuple[float, float]:
    """`Series.rate` of a counter the sampler was asked for, between two of its rows."""
    got = series.rate(spec, t0, t1, second)
    if got is None:
        raise BackendError(f"the counters sampler has no {spec} rows from {t0} to {t1} ns")
    return got


def figures(
    rate_bps: float,
    frame_bytes: int,
    seconds: float,
    rx_if: str,
    recv: Series,
    em: Series | None = None,
    em_ifs: tuple[str, str] = ("a0", "b0"),
    log: list[monitor.Interval] | None = None,
    em_task: str | None = None,
    sender: str | None = None,
    delay_ns: int = 0,
    cores: int = os.sysconf("SC_NPROCESSORS_ONLN"),
) -> Figures | None:
    """`recv` holds `<rx_if>:rx_bytes` (first), `:rx_packets`, `cpu` and the `sched:`
    specs `em_task` (the emulator's thread) and `sender`; `em` the emulator's
    in-interface rx and out-interface tx counters. The log's rows are taken `delay_ns`
    (the link's one-way delay) earlier: what arrives in the window departed then."""
    w = window([[r[0], r[recv.col[f"{rx_if}:rx_bytes"]]] for r in recv.rows], seconds)
    if w is None:
        return None
    inside = [r[0] for r in recv.rows if w[0] <= r[0] <= w[1]]
    t0, t1 = inside[0], inside[-1]
    got, dt = _rate(recv, f"{rx_if}:rx_bytes", t0, t1)
    f = Figures(rate_bps, frame_bytes, dt, got * 8, _rate(recv, f"{rx_if}:rx_packets", t0, t1)[0])
    if recv.has("cpu"):
        tick = os.sysconf("SC_CLK_TCK")
        idle = _rate(recv, "cpu", t0, t1)[0] / tick  # cores' worth of idle time
        f.cores = cores
        f.host_busy_pct = max(0.0, 100 * (1 - idle / cores))
        f.steal_pct = 100 * _rate(recv, "cpu", t0, t1, second=True)[0] / tick / cores
    for spec, run, wait in (
        (em_task, "emulator_cpu_pct", "emulator_wait_pct"),
        (sender, "sender_cpu_pct", "sender_wait_pct"),
    ):
        if spec and recv.has(spec):
            setattr(f, run, _rate(recv, spec, t0, t1)[0] / 1e7)  # ns per s → % of a core
            setattr(f, wait, _rate(recv, spec, t0, t1, second=True)[0] / 1e7)
    a, b = em_ifs
    if em is not None and em.rate(f"{a}:rx_bytes", t0, t1):
        f.offered_bps = _rate(em, f"{a}:rx_bytes", t0, t1)[0] * 8
        f.offered_pps = _rate(em, f"{a}:rx_packets", t0, t1)[0]
        f.released_bps = _rate(em, f"{b}:tx_bytes", t0, t1)[0] * 8
        per_s, span = _rate(em, f"{b}:tx_dropped", t0, t1)
        f.refused = round(per_s * span)
    rows = monitor.between(log or [], t0 - delay_ns, t1 - delay_ns - 1_000_000)
    if log is not None:
        f.intervals = len(rows)
    if rows:
        f.departed_bps = monitor.mean_rate_bps(rows)  # by the rows' times: any log interval
        f.empty_ms = sum(1 for r in rows if r.queue_bytes == 0)
        f.late = sum(r.late_packets for r in rows)
        f.max_lag_us = max(r.max_lag_us for r in rows)
    return f


def emulator_thread(pid: int, direction: str) -> int | None:
    """The thread id of the emulator's worker for one direction (named `linkem-<dir>`)."""
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm") as fh:
                if fh.read().strip() == f"linkem-{direction}":
                    return int(tid)
    except FileNotFoundError:
        pass
    return None


def duration_s(seconds: float) -> int:
    """The test's length for a window of `seconds`: the ramp, the window, 1 s to spare
    (iperf3 takes whole seconds)."""
    return math.ceil(RAMP_S + seconds + 1.0)


def run(
    src: NetnsHost,
    dst: NetnsHost,
    addr: str,
    dst_if: str,
    em,
    direction: str,
    rate_bps: float,
    delay_us: int,
    mtu: int,
    seconds: float,
    port: int,
) -> tuple[Figures | None, dict]:
    """iperf3 -u offering OFFER × the rate of MTU-size frames for RAMP_S + seconds + 1 s,
    with the counters sampled meanwhile. Returns the figures (None: no steady window)
    and iperf3's JSON."""
    payload = mtu - (28 if ":" not in addr else 48)
    frame = mtu + ETH_HEADER
    module = [sys.executable, "-m", "itb.calibration.counters"]
    length = duration_s(seconds)
    limit = str(length + 15)
    tid = emulator_thread(em.pid, direction) if em else None
    em_task = f"sched:{em.pid}:{tid}" if tid is not None else None
    ifs = ("a0", "b0") if direction == "ab" else ("b0", "a0")
    server = dst.spawn(
        ["iperf3", "-s", "-1", "-J", "-p", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    procs, outs = [server], []
    try:
        _wait_listening(dst, port)
        client = src.spawn(
            [
                "iperf3",
                "-c",
                addr,
                "-p",
                str(port),
                "-J",
                "-t",
                str(length),
                "-u",
                "-b",
                str(int(OFFER * rate_bps * payload / frame)),
                "-l",
                str(payload),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        procs.append(client)
        sender = f"sched:{client.pid}"  # `ip netns exec` execs iperf3: the same pid
        specs = [f"{dst_if}:rx_bytes", f"{dst_if}:rx_packets", "cpu", sender]
        samplers = [
            dst.spawn(
                [*module, limit, *specs, *([em_task] if em_task else [])],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        ]
        if em:
            em_host = NetnsHost(em.link, em.ns, cgroup=dst.cgroup)
            a, b = ifs
            samplers.append(
                em_host.spawn(
                    [
                        *module,
                        limit,
                        f"{a}:rx_bytes",
                        f"{a}:rx_packets",
                        f"{b}:tx_bytes",
                        f"{b}:tx_dropped",
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            )
        procs += samplers
        out, err = client.communicate(timeout=length + 60)
        time.sleep(0.3)  # the last frames cross the path
        for p in samplers:
            p.terminate()
        outs = [_json(p.communicate(timeout=10)[0]) for p in samplers]
        res = _json(out) or {"error": err.decode(errors="replace")[-300:]}
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    if "error" in res:
        raise BackendError(f"iperf3: {res['error']}")
    recv = Series(outs[0])
    emu = Series(outs[1]) if len(outs) > 1 else None
    log = None
    if em and recv.rows:
        log = monitor.direction_log(em.log_dir, direction, recv.rows[0][0], recv.rows[-1][0])
    return figures(
        rate_bps, frame, seconds, dst_if, recv, emu, ifs, log, em_task, sender, delay_us * 1000
    ), res


def _json(raw: bytes) -> dict:
    try:
        return json.loads(raw or b"{}")
    except json.JSONDecodeError:
        return {}


def _wait_listening(host: NetnsHost, port: int, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if host.run(["ss", "-Hltn", f"sport = :{port}"], check=False).stdout.strip():
            return
        time.sleep(0.02)
    raise BackendError(f"iperf3 server on {host.name} did not start listening")
